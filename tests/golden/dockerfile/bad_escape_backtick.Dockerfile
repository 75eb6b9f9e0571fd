# escape=`
FROM mcr.microsoft.com/windows/servercore:ltsc2022
RUN python -m sglang.launch_server --model-path C:\models\llama `
    # Windows paths keep their backslashes with the backtick escape
    --dp-size two `
    --enable-dp-attention=false

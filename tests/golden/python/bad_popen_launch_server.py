import unittest

from sglang.test.test_utils import (
    DEFAULT_MODEL_NAME_FOR_TEST_MLA,
    DEFAULT_TIMEOUT_FOR_SERVER_LAUNCH,
    DEFAULT_URL_FOR_TEST,
    popen_launch_server,
)


class TestPureDP(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process = popen_launch_server(
            DEFAULT_MODEL_NAME_FOR_TEST_MLA,
            DEFAULT_URL_FOR_TEST,
            timeout=DEFAULT_TIMEOUT_FOR_SERVER_LAUNCH,
            other_args=[
                "--trust-remote-code",
                "--tp",
                "4",
                "--enable-dp-attention",
                "--dp",
                "4",
                "--moe-a2a-backend",
                "deepep",
                "--cuda-graph-max-bs",
                "128",
                "--port",
                "9000",
            ],
        )


class TestString(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process = popen_launch_server(
            "m", "http://127.0.0.1:8000", 600, other_args="--tp 2"
        )

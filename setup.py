"""The compiled parts: chainframe.datasets._native_rows, answers' bytes to Arrow buffers, and
chainframe.rpc._envelopes, a batch answer's envelopes counted without the GIL (see their C sources).

Optional: where they do not compile (no C compiler, no Python headers), the install goes on without them; every
answer then takes the pure path (Polars), which gives the same tables, and the client counts in Python.
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
SHARED = ["src/chainframe/_find_pair.h"]  # included by both

setup(
    ext_modules=[
        Extension(
            "chainframe.datasets._native_rows",
            sources=["src/chainframe/datasets/_native_rows.c"],
            depends=SHARED,
            extra_compile_args=FLAGS,
            optional=True,
        ),
        Extension(
            "chainframe.rpc._envelopes",
            sources=["src/chainframe/rpc/_envelopes.c"],
            depends=SHARED,
            extra_compile_args=FLAGS,
            optional=True,
        ),
    ]
)

"""The one compiled part: chainframe.datasets._native_rows, answers' bytes to Arrow buffers (see its C source).

Optional: where it does not compile (no C compiler, no Python headers), the install goes on without it and every
answer takes the pure path (Polars), which gives the same tables.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "chainframe.datasets._native_rows",
            sources=["src/chainframe/datasets/_native_rows.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
            optional=True,
        )
    ]
)

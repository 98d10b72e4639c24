"""The compiled parts: chainframe.datasets._native_rows, answers' bytes to Arrow buffers, and
chainframe.rpc._envelopes, a batch answer's envelopes counted without the GIL, and chainframe.verify._native, the
keccak, RLP and trie roots verification repeats per log and receipt (see their C sources).

Optional: where they do not compile (no C compiler, no Python headers), the install goes on without them; every
answer then takes the pure path (Polars), which gives the same tables, the client counts in Python, and verification
hashes and encodes in Python.
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
SHARED = ["src/chainframe/_find_pair.h", "src/chainframe/_json_string.h"]  # included by the two readers
BUFFER = ["src/chainframe/_byte_buffer.h"]  # included by _native_rows and verify._native

setup(
    ext_modules=[
        Extension(
            "chainframe.datasets._native_rows",
            sources=["src/chainframe/datasets/_native_rows.c"],
            depends=SHARED + BUFFER,
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
        Extension(
            "chainframe.verify._native",
            sources=["src/chainframe/verify/_native.c"],
            depends=BUFFER,
            extra_compile_args=FLAGS,
            optional=True,
        ),
    ]
)

"""The public surface is deliberate: a change to it shows up here."""

import chainframe
import chainframe.devnet


def test_top_level_all() -> None:
    assert chainframe.__all__ == sorted(chainframe.__all__)
    assert chainframe.__all__ == [
        "ChainframeError",
        "InputError",
        "RunReport",
        "__version__",
        "acollect",
        "aextract",
        "afollow",
        "aprobe",
        "arepair",
        "collect",
        "decode_event",
        "decode_events",
        "erc1155_transfers",
        "erc20_transfers",
        "erc721_transfers",
        "extract",
        "follow",
        "open_duckdb",
        "probe",
        "repair",
        "scan",
        "series_folder",
        "vacuum",
    ]


def test_datasets_and_extract_all() -> None:
    import chainframe.datasets
    import chainframe.decode
    import chainframe.engine

    for module in (chainframe.datasets, chainframe.decode, chainframe.engine):
        assert module.__all__ == sorted(module.__all__)
        assert all(hasattr(module, name) for name in module.__all__)
    assert list(chainframe.datasets.DATASETS) == [
        "blocks", "transactions", "receipts", "logs", "uncles",
        "traces", "native_transfers", "contracts", "address_appearances", "four_byte_counts",
        "erc20_transfers", "erc721_transfers", "erc1155_transfers", "erc20_balances", "erc20_supplies",
        "erc20_metadata",
        "balances", "nonces", "codes", "slots", "account_proofs", "storage_proofs",
        "balance_diffs", "nonce_diffs", "code_diffs", "storage_diffs",
        "eth_calls", "call_traces", "prestate_accounts", "prestate_storage",
    ]  # fmt: skip


def test_devnet_all() -> None:
    names = chainframe.devnet.__all__
    assert names == sorted(names)
    assert all(hasattr(chainframe.devnet, name) for name in names)
    assert {"Devnet", "FaultRule", "GatewaySettings", "LogLimits", "WorkloadSpec", "GroundTruth"} <= set(names)


def test_redaction_of_keys_in_urls() -> None:
    from chainframe._redact import redact_text, redact_url

    assert redact_url("https://mainnet.example/v3/abc123?x=1") == "https://mainnet.example/v3/<redacted>?x=1"
    assert redact_url("wss://h/ws/v3/abc123") == "wss://h/ws/v3/<redacted>"
    assert redact_text("failed: key=abc123 at /v3/abc123", "abc123") == "failed: key=<redacted> at /v3/<redacted>"


def test_rpc_all() -> None:
    import chainframe.rpc

    names = chainframe.rpc.__all__
    assert names == sorted(names)
    assert all(hasattr(chainframe.rpc, name) for name in names)
    errors = {"RPCError", "TransientError", "TerminalError", "RateLimited", "LimitExceeded", "KeyRefused"}
    assert {"AsyncClient", "Client", "Endpoint", "Block", "Receipt", "Log", *errors} <= set(names)
    assert issubclass(chainframe.rpc.RPCError, chainframe.ChainframeError)


def test_version_matches_the_installed_package() -> None:
    from importlib.metadata import version

    assert chainframe.__version__ == version("chainframe")

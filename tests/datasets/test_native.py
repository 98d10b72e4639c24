"""The native scanner (``_native_rows.c``) against the pure path (Polars' JSON reader and ``_convert``).

For every recorded answer a scanned dataset reads (blocks, transactions, receipts, logs), in both u256 encodings:
the scanner takes it (or the test lists why not) and gives the very table the pure path gives. Bad or odd answers
either give the pure path's table too or are declined (then the pure path runs and names the bad value): never
another table. Random damage to real answers is held to the same rule.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from chainframe.datasets import BLOCKS, LOGS, RECEIPTS, TRANSACTIONS, DecodeError, _native
from chainframe.datasets._columns import U256
from chainframe.datasets._objects import ObjectDataset
from tests.datasets import fuzz
from tests.datasets.test_roundtrip import _batch, _envelope
from tests.fixtures import recorded_responses

CHAIN_ID = 1
BLOCK_METHODS = (
    "eth_getBlockByNumber",
    "eth_getBlockByHash",
    "eth_getUncleByBlockHashAndIndex",
    "eth_getUncleByBlockNumberAndIndex",
)
DECLINED = {
    # Answers the scanner leaves to the pure path, and why that is right.
    "other/ethereumjs/packages/block/test/testdata/testdata-from-rpc-difficulty-as-integer.json": (
        "a difficulty written as decimal text: converted exactly in Python, on that rare path only"
    ),
}


def _cases() -> Iterator[tuple[str, ObjectDataset, bytes]]:
    for record in recorded_responses():
        if record.result is None:
            continue
        if record.method in BLOCK_METHODS:
            block = record.result
            hashes = [t["hash"] if isinstance(t, dict) else t for t in block.get("transactions", [])]
            yield record.id, BLOCKS, _batch({**block, "transactions": hashes} if "transactions" in block else block)
            if any(isinstance(t, dict) for t in block.get("transactions", [])):
                yield f"{record.id}#transactions", TRANSACTIONS, _batch(block, None, {**block, "transactions": []})
        elif record.method == "eth_getBlockReceipts":
            yield record.id, RECEIPTS, _batch(record.result, [], None)
        elif record.method == "eth_getLogs":
            yield record.id, LOGS, json.dumps(_envelope(record.result)).encode()


CASES = list(_cases())


def pure(dataset: ObjectDataset, body: bytes, u256: U256, monkeypatch: pytest.MonkeyPatch) -> pa.Table:
    with monkeypatch.context() as m:
        m.setenv("CHAINFRAME_NATIVE", "0")
        return dataset.transform([body], chain_id=CHAIN_ID, u256=u256)


def test_the_scanner_is_built() -> None:
    """The install compiles it (setup.py; gcc and the Python headers): a build that silently fell back fails here."""
    assert _native.available()


def test_every_dataset_of_the_cases_is_fed() -> None:
    assert {dataset.name for _, dataset, _ in CASES} == {"blocks", "transactions", "receipts", "logs"}
    assert len(CASES) > 50


@pytest.mark.parametrize("u256", ["decimal", "binary"])
@pytest.mark.parametrize(("case", "dataset", "body"), CASES, ids=[c[0] for c in CASES])
def test_recorded_answer_scans_to_the_pure_table(
    case: str, dataset: ObjectDataset, body: bytes, u256: U256, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned = dataset.scanned([body], chain_id=CHAIN_ID, u256=u256)
    if case in DECLINED:
        assert scanned is None, f"no longer declined: remove it from DECLINED ({DECLINED[case]})"
        return
    assert scanned is not None, "declined: the scanner should take every well-formed recorded answer"
    expected = pure(dataset, body, u256, monkeypatch)
    assert scanned.schema == expected.schema
    assert scanned.num_rows == expected.num_rows
    assert scanned.equals(expected), [c for c in scanned.column_names if not scanned[c].equals(expected[c])]


LOG = {
    "address": "0x" + "ab" * 20,
    "topics": ["0x" + "01" * 32, "0x" + "02" * 32],
    "data": "0x00ff",
    "blockNumber": "0x10",
    "blockHash": "0x" + "03" * 32,
    "blockTimestamp": "0x5f5e100",
    "transactionHash": "0x" + "04" * 32,
    "transactionIndex": "0x0",
    "logIndex": "0x1",
    "removed": False,
}


def _logs_body(*logs: dict[str, Any]) -> bytes:
    return json.dumps(_envelope(list(logs))).encode()


def _outcome(dataset: ObjectDataset, body: bytes, u256: U256) -> pa.Table | type[Exception]:
    try:
        return dataset.transform([body], chain_id=CHAIN_ID, u256=u256)
    except DecodeError as exc:
        return type(exc)


def assert_same_or_declined(dataset: ObjectDataset, body: bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The scanner's table equals the pure path's, or it declined; returns whether it took the answer."""
    for u256 in ("decimal", "binary"):
        try:
            scanned = dataset.scanned([body], chain_id=CHAIN_ID, u256=u256)  # type: ignore[arg-type]
        except DecodeError:
            scanned = None  # raised by the pure path's helpers on the scanned arrays: never a wrong table
        with monkeypatch.context() as m:
            m.setenv("CHAINFRAME_NATIVE", "0")
            expected = _outcome(dataset, body, u256)  # type: ignore[arg-type]
        if scanned is None:
            continue
        assert isinstance(expected, pa.Table), f"scanned an answer the pure path refuses ({expected.__name__})"
        assert scanned.equals(expected)
    return scanned is not None


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        ({}, True),
        ({"data": "0x"}, True),
        ({"topics": []}, True),
        ({"blockTimestamp": None}, True),
        ({"removed": True}, True),
        ({"blockNumber": "0x00000010"}, True),  # leading zeros
        ({"blockNumber": 16}, True),  # a JSON number
        ({"blockNumber": "0xffffffffffffffff"}, True),
        ({"blockNumber": "0x10000000000000000"}, False),  # beyond uint64
        ({"blockNumber": "16"}, False),  # decimal text: the pure path's exact conversion
        ({"blockNumber": "0x"}, False),
        ({"blockNumber": "0xg"}, False),
        ({"data": "0x0"}, False),  # half a byte
        ({"data": "00ff"}, False),  # no prefix
        ({"address": "0x" + "ab" * 19}, False),
        ({"address": "0X" + "ab" * 20}, False),
        ({"topics": ["0x01"]}, False),
        ({"transactionHash": "0x" + "0\\u0030" * 32}, False),  # an escape
        ({"removed": "false"}, False),
        ({"topics": "0x" + "01" * 32}, False),  # not a list
        # Fixed-length hex is read without looking for its closing quote: one must stand right after the digits.
        ({"address": "0x" + "ab" * 21}, False),
        ({"address": "0x" + "ab" * 19 + 'a"'}, False),
        ({"address": "0x" + "ab" * 19 + "a\\"}, False),
        ({"topics": ["0x" + "01" * 31 + '0"']}, False),
        ({"topics": ["0x" + "01" * 33]}, False),
        ({"blockHash": "0x" + "02" * 31 + "0g"}, False),
        ({"blockHash": " " * 3 + "0x" + "02" * 32}, False),  # not a string: spaces inside the quotes
    ],
)
def test_odd_values_are_scanned_alike_or_declined(
    change: dict[str, Any], taken: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _logs_body(LOG, {**LOG, "logIndex": "0x2", **change})
    assert assert_same_or_declined(LOGS, body, monkeypatch) is taken


def test_a_missing_key_is_null_and_an_unknown_one_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    odd = {k: v for k, v in LOG.items() if k != "blockTimestamp"}
    odd["extra"] = {"nested": [1, "two", {"three": None}], "s": 'a "quoted" \\ string', "t": "ends in \\", "u": '\\"'}
    assert assert_same_or_declined(LOGS, _logs_body(odd, LOG), monkeypatch)
    table = LOGS.scanned([_logs_body(odd, LOG)], chain_id=CHAIN_ID)
    assert table is not None
    assert table["block_timestamp"].to_pylist() == [None, 100_000_000]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b'{"jsonrpc":"2.0","id":0,"result":null}',
        b'{"jsonrpc":"2.0","id":0,"result":[]}',
        b'{"jsonrpc":"2.0","id":0,"error":{"code":-32005,"message":"query returned more than 10000 results"}}',
        b'{"jsonrpc":"2.0","id":0,"result":[]} trailing',
        b'{"jsonrpc":"2.0","id":0,"result":[{}]}',
        b'{"jsonrpc":"2.0","id":0,"result":[1]}',
        b'{"jsonrpc":"2.0","id":0,"result":{}}',
        b'{"jsonrpc":"2.0","id":0,"result":[],"result":[]}',
    ],
)
def test_envelopes_are_scanned_alike_or_declined(body: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_or_declined(LOGS, body, monkeypatch)


def test_key_orders_that_change_between_objects_scan_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner guesses each key's column from the order of the object before (learned, not the spec's order)."""
    rng = random.Random(11)
    logs = []
    for i in range(40):
        keys = list(LOG)
        if i % 3:
            rng.shuffle(keys)
        log = {k: LOG[k] for k in keys}
        if i % 5 == 0:
            log = {"unknown": [1, {"k": "v"}], **log, "later": "x"}  # keys the scanner skips, first and last
        if i % 7 == 0:
            del log["blockTimestamp"]
        logs.append({**log, "logIndex": hex(i)})
    body = _logs_body(*logs)
    assert assert_same_or_declined(LOGS, body, monkeypatch)


def test_scanned_buffers_are_handed_over_read_only_and_outlive_the_scan() -> None:
    """The scan moves its buffers into Python objects (no copy): read-only, sized, and kept alive by the arrays."""
    from chainframe.datasets import _native_rows

    spec = _native._spec(LOGS.native_kinds("decimal"))
    rows, _, _, columns = _native_rows.scan([_logs_body(LOG, {**LOG, "logIndex": "0x2"})], spec, 0)
    assert rows == 2
    data = columns[-1][3] if columns[-1][3] is not None else columns[0][3]
    view = memoryview(data)
    assert view.readonly
    assert len(data) == view.nbytes > 0
    with pytest.raises(TypeError):
        view[0] = 1  # type: ignore[index]
    table = LOGS.scanned([_logs_body(LOG)], chain_id=CHAIN_ID)
    assert table is not None
    del columns, data, view
    import gc

    gc.collect()
    assert table["address"].to_pylist() == [bytes.fromhex(LOG["address"][2:])]


@pytest.mark.parametrize("dataset", [BLOCKS, TRANSACTIONS, RECEIPTS, LOGS], ids=lambda d: d.name)
def test_a_pieces_answers_scan_together_to_the_pure_table(
    dataset: ObjectDataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece's answers go to the scanner in one call. The rows must come as scanning them one by one gave them: by
    id within each answer, the answers in their order, though every recorded batch here numbers its ids from 0 (as a
    redone batch does) and answers out of id order."""
    bodies = [body for case, d, body in CASES if d is dataset and case not in DECLINED]
    assert len(bodies) >= 4
    taken = 0
    for start in range(0, len(bodies), 4):
        group = bodies[start : start + 4]
        scanned = dataset.scanned(group, chain_id=CHAIN_ID)
        with monkeypatch.context() as m:
            m.setenv("CHAINFRAME_NATIVE", "0")
            expected = dataset.transform(group, chain_id=CHAIN_ID)
        if scanned is not None:
            assert scanned.equals(expected)
            taken += 1
    assert taken


def test_answers_whose_ids_fall_keep_their_order_and_one_declined_declines_all() -> None:
    later = json.dumps([_envelope([LOG], 11), _envelope([{**LOG, "logIndex": "0x5"}], 10)]).encode()
    earlier = json.dumps([_envelope([{**LOG, "logIndex": "0x7"}], 3)]).encode()
    table = RECEIPTS.scanned([], chain_id=CHAIN_ID)
    assert table is not None
    assert table.num_rows == 0
    order = _native.scan([later, earlier], {"log_index": ("logIndex", "u64")}, 2)
    assert order is not None
    assert order[0] == 3
    assert order[1]["log_index"].to_pylist() == [5, 1, 7]  # by id within the first answer, then the second
    assert _native.scan([later, b"[" + later], {"log_index": ("logIndex", "u64")}, 2) is None


def test_a_key_twice_is_left_to_the_pure_path() -> None:
    body = _logs_body(LOG).replace(b'"data": "0x00ff"', b'"data": "0x00ff", "data": "0x01"')
    assert body.count(b'"data"') == 2
    assert LOGS.scanned([body], chain_id=CHAIN_ID) is None


def test_wei_beyond_decimal128_is_left_to_the_pure_path_which_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    block = next(r.result for r in recorded_responses() if r.method == "eth_getBlockByNumber" and r.result)
    block = {**block, "transactions": [], "baseFeePerGas": hex(10**38)}
    body = _batch(block)
    assert BLOCKS.scanned([body], chain_id=CHAIN_ID) is None
    assert BLOCKS.scanned([body], chain_id=CHAIN_ID, u256="binary") is not None
    just_fits = _batch({**block, "baseFeePerGas": hex(10**38 - 1)})
    assert assert_same_or_declined(BLOCKS, just_fits, monkeypatch)


def test_batch_rows_follow_the_ids_and_a_batch_error_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    receipts = next(r.result for r in recorded_responses() if r.method == "eth_getBlockReceipts" and r.result)
    body = json.dumps([_envelope(receipts, 2), _envelope(receipts[:1], 0), _envelope(None, 1)]).encode()
    assert assert_same_or_declined(RECEIPTS, body, monkeypatch)
    table = RECEIPTS.scanned([body], chain_id=CHAIN_ID)
    assert table is not None
    assert table.num_rows == len(receipts) + 1
    error = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "header not found"}}
    with_error = json.dumps([_envelope(receipts, 2), error]).encode()
    assert RECEIPTS.scanned([with_error], chain_id=CHAIN_ID) is None
    with pytest.raises(DecodeError):
        RECEIPTS.transform([with_error], chain_id=CHAIN_ID)


def test_transactions_take_their_block_timestamp_and_hashes_are_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    block = next(
        r.result
        for r in recorded_responses()
        if r.method == "eth_getBlockByNumber"
        and r.result
        and any(isinstance(t, dict) for t in r.result["transactions"])
    )
    untimed = {
        **block,
        "transactions": [{k: v for k, v in t.items() if k != "blockTimestamp"} for t in block["transactions"]],
    }
    body = _batch(untimed)
    assert assert_same_or_declined(TRANSACTIONS, body, monkeypatch)
    table = TRANSACTIONS.scanned([body], chain_id=CHAIN_ID)
    assert table is not None
    assert set(table["block_timestamp"].to_pylist()) == {int(block["timestamp"], 16)}
    hashes = _batch({**block, "transactions": [t["hash"] for t in block["transactions"]]})
    assert TRANSACTIONS.scanned([hashes], chain_id=CHAIN_ID) is None


def test_random_damage_never_scans_to_another_table() -> None:
    """A differential fuzz (tests/datasets/fuzz.py): real answers with bytes cut, dropped, doubled, flipped or changed,
    control characters, bytes that are not UTF-8, escapes or garbled keys put in. The scanner may decline; it never
    takes what the pure path refuses, nor gives another table. ``scripts/bench fuzz_native`` runs more cases."""
    originals = [(d, b) for _, d, b in CASES if len(b) < 200_000]
    report = fuzz.run(originals, int(os.environ.get("DAMAGE_ROUNDS", "2500")), seed=20261123)
    assert not report.wrong, (report.summary(), report.wrong[:3])
    # Damage in a value the scan skips, or to an equally valid value, still scans; most damage is refused by both.
    assert report.counts["both accept, equal"] > 200, report.summary()
    assert report.counts["native declines, pure refuses"] > 1000, report.summary()


KNOWN_LOG = _logs_body(LOG)
DECLINED_REFUSED: fuzz.Outcome = "native declines, pure refuses"
DECLINED_TAKEN: fuzz.Outcome = "native declines, pure accepts"
EQUAL: fuzz.Outcome = "both accept, equal"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # Keys garbled as the fuzz found them taken: not JSON, so the pure path refuses them.
        (b'"transactionIndex"', b'"transactionIndex \n\t"', DECLINED_REFUSED),
        (b'"transactionIndex"', b'"transactionIndex \x01"', DECLINED_REFUSED),
        (b'"logIndex"', b'"\xafogIndex"', DECLINED_REFUSED),
        (b'"logIndex"', b'"log\xc3Index"', DECLINED_REFUSED),  # a lead byte without its continuation
        (b'"logIndex"', b'"log\xc0\x80Index"', DECLINED_REFUSED),  # an overlong NUL
        (b'"logIndex"', b'"log\xed\xa0\x80Index"', DECLINED_REFUSED),  # a surrogate
        (b'"logIndex"', b'"log\xf4\x90\x80\x80Index"', DECLINED_REFUSED),  # beyond U+10FFFF
        # Well-formed: an unknown key, read by neither path (the column is null on both).
        (b'"logIndex"', b'"log\xc3\xa9Index"', EQUAL),
        (b'"logIndex"', b'"logIndeX"', EQUAL),
        (b'"logIndex"', b'"log\x7fIndex"', EQUAL),  # DEL is not a control character to JSON
        (b'"logIndex"', b'"log\\u0049ndex"', DECLINED_TAKEN),  # an escaped key: left to the pure path
        # Values of a key neither path maps.
        (b'"removed": false', b'"removed": false, "x": "a\nb"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "a\tb"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "\xff"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "\xe2\x82"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "\\q"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "\\u12"', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": "\\ud800"', DECLINED_TAKEN),  # a lone surrogate
        (b'"removed": false', b'"removed": false, "x": "\\u0041 \\n \\" \\\\ \\/ \\b\\f\\r\\t"', EQUAL),
        (b'"removed": false', b'"removed": false, "x": "\xe2\x82\xac \xf0\x9f\x98\x80"', EQUAL),
        (b'"removed": false', b'"removed": false, "x": -0.5e-3', EQUAL),
        (b'"removed": false', b'"removed": false, "x": [1E+5, {"k": null}, true]', EQUAL),
        (b'"removed": false', b'"removed": false, "x": +1', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": 01', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": 1.', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": .5', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": 1e', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": 1-2', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": NaN', DECLINED_REFUSED),
        (b'"removed": false', b'"removed": false, "x": {1: 2}', DECLINED_REFUSED),
        # The envelope: the pure path reads only an eth_getLogs answer's result list; the scan checks it all.
        (b'"2.0"', b'"2.\n0"', DECLINED_TAKEN),
        (b'"2.0"', b'"2.0 \xe2\x82\xac"', EQUAL),
    ],
)
def test_an_answer_that_is_not_json_is_declined(before: bytes, after: bytes, expected: fuzz.Outcome) -> None:
    """Every byte of the answer is checked by the scan: a string that is not UTF-8 or holds a raw control character,
    a bad escape, a number JSON does not write, wherever it stands, declines the answer; the pure path refuses it."""
    assert before in KNOWN_LOG
    body = KNOWN_LOG.replace(before, after, 1)
    assert [fuzz.outcome(LOGS, body, u256) for u256 in ("decimal", "binary")] == [expected] * 2


@pytest.mark.parametrize(
    ("logs", "taken"),
    [
        ("[]", True),
        ("null", True),
        ('[{"logIndex": "0x0", "topics": [], "data": "0x"}, null]', True),
        ('[{"logIndex": 5}]', True),
        ('[{"other": {"k": [1]}}]', True),
        ("[1]", False),  # the pure path reads each log as an object
        ('["0x00"]', False),
        ("[[]]", False),
        ('[{"logIndex": {"q": 1}}]', False),  # and its logIndex as text
        ('[{"logIndex": ["0x1"]}]', False),
        ("{}", False),
    ],
)
def test_a_receipts_logs_are_counted_as_the_pure_path_reads_them(
    logs: str, taken: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    receipts = next(r.result for r in recorded_responses() if r.method == "eth_getBlockReceipts" and r.result)
    body = json.dumps([_envelope([{**receipts[0], "logs": json.loads(logs)}], 0)]).encode()
    assert assert_same_or_declined(RECEIPTS, body, monkeypatch) is taken


NULL_RESULT = re.compile(rb'"result"\s*:\s*null')


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"result":null}',
        b'{"result" \t:\r\n null}',
        b'{"result":\x0bnull,"id":1}',
        b'[{"id":1,"result":{}},{"id":2,"result": null}]',
        b'{"result":[null]}',
        b'{"result":"null"}',
        b'{"results":null}',
        b'{"result"null}',
        b'{"result"::null}',
        b"{result:null}",
        b"null",
        b":null",
        b'"result":nul',
        b"",
        b'{"a":null,"b":"result","result":nullx}',
        b'{"xresult":null}',
        b'{"result\\":null}',
    ],
)
def test_the_null_result_search_matches_the_regex(body: bytes) -> None:
    assert _native.null_result(body) is (NULL_RESULT.search(body) is not None)


def test_the_null_result_search_on_recorded_and_damaged_answers() -> None:
    rng = random.Random(3)
    bodies = [body for _, _, body in CASES]
    for body in bodies:
        assert _native.null_result(body) is (NULL_RESULT.search(body) is not None)
    for _ in range(300):
        damaged = bytearray(rng.choice(bodies))
        for _ in range(rng.randrange(1, 4)):  # put a null result somewhere, maybe spaced, maybe broken
            at = rng.randrange(len(damaged) + 1)
            damaged[at:at] = rng.choice([b'"result":null', b'"result" : null', b'"result":\nnul', b'result":null'])
        assert _native.null_result(bytes(damaged)) is (NULL_RESULT.search(damaged) is not None)


def test_the_null_result_search_at_every_offset_across_its_64_byte_blocks() -> None:
    """The search reads 64 bytes at a time (chainframe/_find_pair.h): a null result starting anywhere, or cut short
    at the end, is found exactly where the regex finds it."""
    for text in (b'"result":null', b'"result": nul', b"null", b'"result":nu'):
        for at in range(150):
            for length in (at + len(text), at + len(text) + 1, 200):
                body = bytearray(b"n" * max(length, at + len(text)))
                body[at : at + len(text)] = text
                body = bytes(body[:length])
                assert _native.null_result(body) is (NULL_RESULT.search(body) is not None), (text, at, length)


def test_the_null_result_search_is_off_with_the_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    assert _native.null_result(b'{"result":null}') is None

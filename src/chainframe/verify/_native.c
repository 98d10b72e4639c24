/* chainframe.verify._native: the hashing and encoding that verification repeats per log, receipt and trie node.
 *
 * Proving the benchmark chain offline spent its time in Python around small operations: 2.7M calls of the recursive
 * RLP encoder, 100k keccak calls through pycryptodome's cffi wrapper (about 10 us each for a 1 us hash), and the
 * to_pylist of every log. Here the same operations are done in C, the bulk ones straight from Arrow buffers:
 *
 * - keccak256(data): keccak-256 (the pre-NIST padding Ethereum uses), one call without a wrapper object;
 * - keccak256_many(items, wide): each item's keccak-256, eight at a time in AVX-512 registers where the CPU has them
 *   (``SIMD``), as receipts_roots hashes the leaves of many tries;
 * - rlp(item): RLP of bytes and (nested) lists or tuples of them;
 * - ordered_root(values): the root of the Merkle-Patricia trie holding values[i] under RLP(i);
 * - receipts_roots(...): each block's receiptsRoot from receipt and log columns sorted by block and index;
 * - blooms(...): each group's 2048-bit logs bloom from log addresses and topics, each distinct item hashed once;
 * - transactions_encoded(...): each transaction's hash and signed payload's hash, and each block's transactionsRoot,
 *   from transaction columns sorted by block and index (types 0-4; a row it does not encode is left to Python).
 *
 * Arrow columns come as (offsets buffer, data buffer, array offset) for binary (nulls already filled with empty
 * values), (buffer, array offset) for int64. The pure-Python code in _hashing.py, _trie.py, _receipts.py and _bloom.py
 * is the reference: tests/verify/test_native.py compares both on random and recorded inputs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------- keccak-256 ---------- */

static const uint64_t RC[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};
static const int ROTC[24] = {1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44};
static const int PILN[24] = {10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1};

#define ROTL(x, n) (((x) << (n)) | ((x) >> (64 - (n))))

/* Every loop unrolled (constant indices let the 25 lanes live in registers): 3.3x the throughput of the rolled loops
 * at -O2 (102 -> 340 MB/s on 1 MB inputs). */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 24")
#elif defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

static void keccakf(uint64_t st[25]) {
    uint64_t bc[5], t;
    for (int round = 0; round < 24; round++) {
        UNROLL for (int i = 0; i < 5; i++) bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
        UNROLL for (int i = 0; i < 5; i++) {
            t = bc[(i + 4) % 5] ^ ROTL(bc[(i + 1) % 5], 1);
            UNROLL for (int j = 0; j < 25; j += 5) st[j + i] ^= t;
        }
        t = st[1];
        UNROLL for (int i = 0; i < 24; i++) {
            int j = PILN[i];
            bc[0] = st[j];
            st[j] = ROTL(t, ROTC[i]);
            t = bc[0];
        }
        UNROLL for (int j = 0; j < 25; j += 5) {
            UNROLL for (int i = 0; i < 5; i++) bc[i] = st[j + i];
            UNROLL for (int i = 0; i < 5; i++) st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
        }
        st[0] ^= RC[round];
    }
}

static uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

#define RATE 136

static void keccak256(const uint8_t *data, size_t len, uint8_t out[32]) {
    uint64_t st[25] = {0};
    while (len >= RATE) {
        for (int i = 0; i < RATE / 8; i++) st[i] ^= load64(data + 8 * i);
        keccakf(st);
        data += RATE;
        len -= RATE;
    }
    uint8_t last[RATE] = {0};
    memcpy(last, data, len);
    last[len] ^= 0x01; /* keccak's padding, not SHA-3's 0x06 */
    last[RATE - 1] ^= 0x80;
    for (int i = 0; i < RATE / 8; i++) st[i] ^= load64(last + 8 * i);
    keccakf(st);
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 8; b++) out[8 * i + b] = (uint8_t)(st[i] >> (8 * b));
}

/* ---------- keccak-256 of many inputs at once ---------- */

/* The receipts trie hashes every receipt (with its logs) once, as its leaf: most of a receipts root's time, at about
 * 340 MB/s one input at a time. Eight inputs go through the permutation together in AVX-512 registers (each 64-bit
 * lane one input's state word), about 3.4x that where the CPU has AVX-512F (1.15 GB/s on the benchmark machine's
 * 3.5 kB leaves); inputs of about one length are put together so that the eight finish at about the same block. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X8 1

static const int ROT[25] = {0,  1,  62, 28, 27, 36, 44, 6,  55, 20, 3,  10, 43,
                            25, 39, 41, 45, 15, 21, 8,  18, 2,  61, 56, 14}; /* r[x][y] at x + 5y */

__attribute__((target("avx512f"))) static void keccakf_x8(__m512i s[25]) {
    __m512i c[5], d[5], b[25];
    for (int round = 0; round < 24; round++) {
        UNROLL for (int x = 0; x < 5; x++) c[x] = _mm512_ternarylogic_epi64(
            _mm512_ternarylogic_epi64(s[x], s[x + 5], s[x + 10], 0x96), s[x + 15], s[x + 20], 0x96); /* xor of 3 */
        UNROLL for (int x = 0; x < 5; x++) d[x] = _mm512_xor_si512(c[(x + 4) % 5], _mm512_rol_epi64(c[(x + 1) % 5], 1));
        UNROLL for (int i = 0; i < 25; i++) s[i] = _mm512_xor_si512(s[i], d[i % 5]);
        UNROLL for (int x = 0; x < 5; x++) UNROLL for (int y = 0; y < 5; y++) /* rho and pi */
            b[y + 5 * ((2 * x + 3 * y) % 5)] = _mm512_rolv_epi64(s[x + 5 * y], _mm512_set1_epi64(ROT[x + 5 * y]));
        UNROLL for (int y = 0; y < 5; y++) UNROLL for (int x = 0; x < 5; x++) /* chi: a ^ (~b & c) */
            s[x + 5 * y] = _mm512_ternarylogic_epi64(b[x + 5 * y], b[(x + 1) % 5 + 5 * y], b[(x + 2) % 5 + 5 * y], 0xD2);
        s[0] = _mm512_xor_si512(s[0], _mm512_set1_epi64((long long)RC[round]));
    }
}

__attribute__((target("avx512f"))) static void keccak256_x8(const uint8_t *const data[8], const size_t len[8],
                                                             uint8_t *const out[8]) {
    static const uint8_t zero[RATE] = {0};
    __m512i s[25];
    for (int i = 0; i < 25; i++) s[i] = _mm512_setzero_si512();
    uint8_t last[8][RATE]; /* each input's final block, padded */
    size_t blocks[8], most = 0;
    for (int j = 0; j < 8; j++) {
        blocks[j] = len[j] / RATE + 1;
        most = blocks[j] > most ? blocks[j] : most;
        size_t tail = len[j] % RATE;
        memset(last[j], 0, RATE);
        memcpy(last[j], data[j] + (blocks[j] - 1) * RATE, tail);
        last[j][tail] ^= 0x01;
        last[j][RATE - 1] ^= 0x80;
    }
    for (size_t b = 0; b < most; b++) {
        long long at[8]; /* where each lane's block is (an input already hashed takes zeros) */
        int finishing = 0;
        for (int j = 0; j < 8; j++) {
            const uint8_t *p = b + 1 < blocks[j] ? data[j] + b * RATE : b + 1 == blocks[j] ? last[j] : zero;
            at[j] = (long long)(uintptr_t)p;
            finishing |= b + 1 == blocks[j];
        }
        __m512i where = _mm512_loadu_si512(at);
        for (int w = 0; w < RATE / 8; w++)
            s[w] = _mm512_xor_si512(
                s[w], _mm512_i64gather_epi64(_mm512_add_epi64(where, _mm512_set1_epi64(8 * w)), NULL, 1));
        keccakf_x8(s);
        if (!finishing) continue;
        uint64_t words[4][8];
        for (int k = 0; k < 4; k++) _mm512_storeu_si512(words[k], s[k]);
        for (int j = 0; j < 8; j++)
            if (b + 1 == blocks[j])
                for (int k = 0; k < 4; k++)
                    for (int i = 0; i < 8; i++) out[j][8 * k + i] = (uint8_t)(words[k][j] >> (8 * i));
    }
}
#endif

static int simd = 0; /* set at import: the CPU has AVX-512F */

typedef struct {
    const uint8_t *data;
    size_t len;
    uint8_t *out;
} Hashing;

static int by_blocks(const void *a, const void *b) {
    size_t x = ((const Hashing *)a)->len / RATE, y = ((const Hashing *)b)->len / RATE;
    return (x > y) - (x < y);
}

/* Each item's keccak-256 into its ``out`` (the items are reordered); ``wide``: eight at a time where the CPU can. */
static void keccak_many(Hashing *items, size_t n, int wide) {
    size_t i = 0;
#ifdef HAVE_X8
    if (wide && simd && n >= 8) {
        qsort(items, n, sizeof(Hashing), by_blocks);
        for (; i + 8 <= n; i += 8) {
            const uint8_t *data[8];
            size_t len[8];
            uint8_t *out[8];
            for (int j = 0; j < 8; j++) data[j] = items[i + j].data, len[j] = items[i + j].len, out[j] = items[i + j].out;
            keccak256_x8(data, len, out);
        }
    }
#else
    (void)wide;
#endif
    for (; i < n; i++) keccak256(items[i].data, items[i].len, items[i].out);
}

/* ---------- a growable byte buffer: _byte_buffer.h ---------- */

#include "../_byte_buffer.h"

/* ---------- RLP ---------- */

static size_t be_size(size_t v) {
    size_t n = 0;
    while (v) {
        n++;
        v >>= 8;
    }
    return n;
}

/* Bytes of the header of a string (offset 0x80) or list (0xc0) of ``size`` payload bytes. */
static size_t header_size(size_t size) { return size < 56 ? 1 : 1 + be_size(size); }

static int put_header(Buf *b, size_t size, uint8_t offset) {
    uint8_t h[9];
    size_t n = be_size(size);
    if (size < 56) {
        h[0] = (uint8_t)(offset + size);
        return buf_put(b, h, 1);
    }
    h[0] = (uint8_t)(offset + 55 + n);
    for (size_t i = 0; i < n; i++) h[1 + i] = (uint8_t)(size >> (8 * (n - 1 - i)));
    return buf_put(b, h, 1 + n);
}

static size_t str_size(const uint8_t *p, size_t n) { return (n == 1 && p[0] < 0x80) ? 1 : header_size(n) + n; }

static int put_str(Buf *b, const uint8_t *p, size_t n) {
    if (n == 1 && p[0] < 0x80) return buf_put(b, p, 1);
    if (put_header(b, n, 0x80)) return -1;
    return buf_put(b, p, n);
}

/* Minimal big-endian bytes of an unsigned integer (zero: none). */
static size_t uint_bytes(uint64_t v, uint8_t out[8]) {
    size_t n = 0;
    for (uint64_t w = v; w; w >>= 8) n++;
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return n;
}

/* Encoded size of a Python item (bytes, or a list/tuple of items), -1 with an exception set. */
static Py_ssize_t item_size(PyObject *item, int depth) {
    if (PyBytes_Check(item)) {
        return (Py_ssize_t)str_size((const uint8_t *)PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
    }
    if (!PyList_Check(item) && !PyTuple_Check(item)) {
        PyErr_Format(PyExc_TypeError, "rlp encodes bytes and lists, not %.100s", Py_TYPE(item)->tp_name);
        return -1;
    }
    if (depth > 64) {
        PyErr_SetString(PyExc_ValueError, "rlp: lists nested too deep");
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(item), payload = 0;
    PyObject **items = PySequence_Fast_ITEMS(item);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = item_size(items[i], depth + 1);
        if (s < 0) return -1;
        payload += s;
    }
    return (Py_ssize_t)header_size((size_t)payload) + payload;
}

static int put_item(Buf *b, PyObject *item) {
    if (PyBytes_Check(item))
        return put_str(b, (const uint8_t *)PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
    Py_ssize_t n = PySequence_Fast_GET_SIZE(item), payload = 0;
    PyObject **items = PySequence_Fast_ITEMS(item);
    for (Py_ssize_t i = 0; i < n; i++) payload += item_size(items[i], 0); /* checked by the first pass */
    if (put_header(b, (size_t)payload, 0xC0)) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (put_item(b, items[i])) return -1;
    return 0;
}

/* ---------- the ordered trie's root ---------- */

typedef struct {
    uint8_t nib[20];
    uint8_t len;
    uint8_t prepared; /* its leaf node is in ``node`` (and its hash in ``hash`` when 32 bytes or more) */
    const uint8_t *value;
    size_t size;
    const uint8_t *node;
    size_t node_at, node_len;
    uint8_t hash[32];
} Pair;

static int pair_cmp(const void *a, const void *b) {
    const Pair *x = a, *y = b;
    int n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->nib, y->nib, (size_t)n);
    return c ? c : (int)x->len - (int)y->len;
}

static void index_key(size_t i, Pair *p) {
    uint8_t key[9];
    size_t n;
    if (i == 0) {
        key[0] = 0x80;
        n = 1;
    } else if (i < 0x80) {
        key[0] = (uint8_t)i;
        n = 1;
    } else {
        uint8_t raw[8];
        size_t m = uint_bytes((uint64_t)i, raw);
        key[0] = (uint8_t)(0x80 + m);
        memcpy(key + 1, raw, m);
        n = 1 + m;
    }
    for (size_t k = 0; k < n; k++) {
        p->nib[2 * k] = key[k] >> 4;
        p->nib[2 * k + 1] = key[k] & 15;
    }
    p->len = (uint8_t)(2 * n);
}

static size_t hex_prefix(const uint8_t *path, size_t n, int leaf, uint8_t out[12]) {
    size_t k = 0, i = 0;
    int flag = leaf ? 2 : 0;
    if (n % 2) {
        out[k++] = (uint8_t)((flag + 1) << 4 | path[0]);
        i = 1;
    } else {
        out[k++] = (uint8_t)(flag << 4);
    }
    for (; i < n; i += 2) out[k++] = (uint8_t)(path[i] << 4 | path[i + 1]);
    return k;
}

static int put_hex_prefix(Buf *b, const uint8_t *path, size_t n, int leaf) {
    uint8_t out[12];
    return put_str(b, out, hex_prefix(path, n, leaf, out));
}

static int encode_node(const Pair *pairs, size_t count, size_t depth, Buf *out);

/* A child as its parent holds it: its encoding when shorter than 32 bytes, else its hash. */
static int put_ref(Buf *b, const Pair *pairs, size_t count, size_t depth) {
    if (count == 1 && pairs[0].prepared) { /* a leaf encoded (and hashed) already, at this very depth */
        if (pairs[0].node_len < 32) return buf_put(b, pairs[0].node, pairs[0].node_len);
        uint8_t h = 0xA0;
        return buf_put(b, &h, 1) || buf_put(b, pairs[0].hash, 32);
    }
    Buf child = {0};
    if (encode_node(pairs, count, depth, &child)) {
        free(child.data);
        return -1;
    }
    int rc;
    if (child.len < 32) {
        rc = buf_put(b, child.data, child.len);
    } else {
        uint8_t h[33];
        h[0] = 0xA0;
        keccak256(child.data, child.len, h + 1);
        rc = buf_put(b, h, 33);
    }
    free(child.data);
    return rc;
}

static int encode_node(const Pair *pairs, size_t count, size_t depth, Buf *out) {
    Buf payload = {0};
    int rc = -1;
    if (count == 1) {
        if (put_hex_prefix(&payload, pairs[0].nib + depth, pairs[0].len - depth, 1)) goto done;
        if (put_str(&payload, pairs[0].value, pairs[0].size)) goto done;
    } else {
        const Pair *first = &pairs[0], *last = &pairs[count - 1];
        size_t limit = first->len < last->len ? first->len : last->len, shared = 0;
        while (depth + shared < limit && first->nib[depth + shared] == last->nib[depth + shared]) shared++;
        if (shared) {
            if (put_hex_prefix(&payload, first->nib + depth, shared, 0)) goto done;
            if (put_ref(&payload, pairs, count, depth + shared)) goto done;
        } else {
            size_t i = 0;
            const Pair *here = NULL;
            if (pairs[0].len == depth) here = &pairs[i++]; /* sorted: a key that ends here comes first */
            for (int nibble = 0; nibble < 16; nibble++) {
                size_t j = i;
                while (j < count && pairs[j].nib[depth] == nibble) j++;
                if (j == i) {
                    uint8_t empty = 0x80;
                    if (buf_put(&payload, &empty, 1)) goto done;
                } else if (put_ref(&payload, pairs + i, j - i, depth + 1)) {
                    goto done;
                }
                i = j;
            }
            if (here) {
                if (put_str(&payload, here->value, here->size)) goto done;
            } else {
                uint8_t empty = 0x80;
                if (buf_put(&payload, &empty, 1)) goto done;
            }
        }
    }
    if (put_header(out, payload.len, 0xC0) || buf_put(out, payload.data, payload.len)) goto done;
    rc = 0;
done:
    free(payload.data);
    return rc;
}

static const uint8_t EMPTY_ROOT[32] = {0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45,
                                       0xe6, 0x92, 0xc0, 0xf8, 0x6e, 0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c,
                                       0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21};

/* The keys of values[i] (RLP(i)), filled into ``pairs`` in their trie order. */
static void trie_keys(Pair *pairs, size_t count) {
    for (size_t i = 0; i < count; i++) index_key(i, &pairs[i]);
    qsort(pairs, count, sizeof(Pair), pair_cmp);
}

/* Root of the trie of ``pairs`` (keyed, in order; leaves possibly prepared). 0, or -1 out of memory. */
static int trie_hash(const Pair *pairs, size_t count, uint8_t root[32]) {
    if (count == 0) {
        memcpy(root, EMPTY_ROOT, 32);
        return 0;
    }
    if (count == 1 && pairs[0].prepared) { /* the root is the leaf */
        if (pairs[0].node_len >= 32)
            memcpy(root, pairs[0].hash, 32);
        else
            keccak256(pairs[0].node, pairs[0].node_len, root);
        return 0;
    }
    Buf node = {0};
    if (encode_node(pairs, count, 0, &node)) {
        free(node.data);
        return -1;
    }
    keccak256(node.data, node.len, root);
    free(node.data);
    return 0;
}

/* Root of values[i] under RLP(i); ``pairs`` holds the values, its keys are filled here. 0, or -1 out of memory. */
static int trie_root(Pair *pairs, size_t count, uint8_t root[32]) {
    trie_keys(pairs, count);
    return trie_hash(pairs, count, root);
}

/* Each leaf of the trie of ``pairs`` (keyed, in order) encoded as encode_node would at the depth it sits, appended to
 * ``nodes`` (node_at: the buffer may still move), so that many tries' leaves are hashed together (keccak_many) before
 * their roots are built. Walks the trie as encode_node does. 0, or -1 out of memory. */
static int prepare_leaves(Pair *pairs, size_t count, size_t depth, Buf *nodes) {
    if (count == 1) {
        Pair *leaf = &pairs[0];
        uint8_t path[12];
        size_t k = hex_prefix(leaf->nib + depth, leaf->len - depth, 1, path);
        leaf->node_at = nodes->len;
        if (put_header(nodes, str_size(path, k) + str_size(leaf->value, leaf->size), 0xC0) ||
            put_str(nodes, path, k) || put_str(nodes, leaf->value, leaf->size))
            return -1;
        leaf->node_len = nodes->len - leaf->node_at;
        leaf->prepared = 1;
        return 0;
    }
    const Pair *first = &pairs[0], *last = &pairs[count - 1];
    size_t limit = first->len < last->len ? first->len : last->len, shared = 0;
    while (depth + shared < limit && first->nib[depth + shared] == last->nib[depth + shared]) shared++;
    if (shared) return prepare_leaves(pairs, count, depth + shared, nodes);
    size_t i = pairs[0].len == depth ? 1 : 0; /* a value ending here is held in the branch, not a leaf */
    for (int nibble = 0; nibble < 16; nibble++) {
        size_t j = i;
        while (j < count && pairs[j].nib[depth] == nibble) j++;
        if (j > i && prepare_leaves(pairs + i, j - i, depth + 1, nodes)) return -1;
        i = j;
    }
    return 0;
}

/* ---------- Arrow columns ---------- */

typedef struct {
    Py_buffer offsets, data;
    Py_ssize_t offset;
} BinCol;

typedef struct {
    Py_buffer values;
    Py_ssize_t offset;
} IntCol;

static int bin_col(PyObject *spec, BinCol *c) {
    PyObject *offsets, *data;
    memset(c, 0, sizeof(*c));
    if (!PyArg_ParseTuple(spec, "OOn", &offsets, &data, &c->offset)) return -1;
    if (PyObject_GetBuffer(offsets, &c->offsets, PyBUF_SIMPLE)) return -1;
    if (PyObject_GetBuffer(data, &c->data, PyBUF_SIMPLE)) {
        PyBuffer_Release(&c->offsets);
        return -1;
    }
    return 0;
}

static void bin_release(BinCol *c) {
    if (c->offsets.obj) PyBuffer_Release(&c->offsets);
    if (c->data.obj) PyBuffer_Release(&c->data);
}

/* Item i's bytes: 0, or -1 with an exception when the offsets point outside the buffers. */
static int bin_get(const BinCol *c, Py_ssize_t i, const uint8_t **p, size_t *n) {
    Py_ssize_t k = c->offset + i;
    if (k < 0 || (size_t)(k + 2) * 4 > (size_t)c->offsets.len) goto bad;
    int32_t a, b;
    memcpy(&a, (const uint8_t *)c->offsets.buf + 4 * k, 4);
    memcpy(&b, (const uint8_t *)c->offsets.buf + 4 * (k + 1), 4);
    if (a < 0 || b < a || b > c->data.len) goto bad;
    *p = (const uint8_t *)c->data.buf + a;
    *n = (size_t)(b - a);
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "an Arrow binary column's offsets are out of bounds");
    return -1;
}

static int int_col(PyObject *spec, IntCol *c, Py_ssize_t rows) {
    memset(c, 0, sizeof(*c));
    PyObject *values;
    if (!PyArg_ParseTuple(spec, "On", &values, &c->offset)) return -1;
    if (PyObject_GetBuffer(values, &c->values, PyBUF_SIMPLE)) return -1;
    if (c->offset < 0 || (size_t)(c->offset + rows) * 8 > (size_t)c->values.len) {
        PyBuffer_Release(&c->values);
        c->values.obj = NULL;
        PyErr_SetString(PyExc_ValueError, "an Arrow int64 column is shorter than its rows");
        return -1;
    }
    return 0;
}

static int64_t int_get(const IntCol *c, Py_ssize_t i) {
    int64_t v;
    memcpy(&v, (const uint8_t *)c->values.buf + 8 * (c->offset + i), 8);
    return v;
}

static void int_release(IntCol *c) {
    if (c->values.obj) PyBuffer_Release(&c->values);
}

/* ---------- Python functions ---------- */

static PyObject *py_keccak256(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) return NULL;
    uint8_t out[32];
    keccak256(view.buf, (size_t)view.len, out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* keccak256_many(items, wide) -> the digest of each (``wide`` false: one at a time, the reference of the wide way). */
static PyObject *py_keccak256_many(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *values;
    int wide;
    if (!PyArg_ParseTuple(args, "Op", &values, &wide)) return NULL;
    PyObject *seq = PySequence_Fast(values, "keccak256_many takes a sequence of bytes");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *result = NULL;
    Hashing *hashing = calloc((size_t)n + 1, sizeof(Hashing));
    uint8_t *out = calloc((size_t)n + 1, 32);
    if (!hashing || !out) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "keccak256_many takes bytes, not %.100s", Py_TYPE(items[i])->tp_name);
            goto done;
        }
        hashing[i] = (Hashing){(const uint8_t *)PyBytes_AS_STRING(items[i]), (size_t)PyBytes_GET_SIZE(items[i]),
                               out + 32 * i};
    }
    keccak_many(hashing, (size_t)n, wide);
    result = PyList_New(n);
    for (Py_ssize_t i = 0; result && i < n; i++) {
        PyObject *digest = PyBytes_FromStringAndSize((const char *)out + 32 * i, 32);
        if (!digest) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, digest);
    }
done:
    free(hashing);
    free(out);
    Py_DECREF(seq);
    return result;
}

static PyObject *py_rlp(PyObject *self, PyObject *item) {
    (void)self;
    Py_ssize_t size = item_size(item, 0);
    if (size < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (!out) return NULL;
    Buf b = {(uint8_t *)PyBytes_AS_STRING(out), 0, (size_t)size}; /* exactly sized: never reallocated */
    put_item(&b, item);
    return out;
}

static PyObject *py_ordered_root(PyObject *self, PyObject *values) {
    (void)self;
    PyObject *seq = PySequence_Fast(values, "ordered_root takes a sequence of bytes");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Pair *pairs = calloc((size_t)n + 1, sizeof(Pair));
    PyObject *result = NULL;
    if (!pairs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "ordered_root takes bytes, not %.100s", Py_TYPE(items[i])->tp_name);
            goto done;
        }
        pairs[i].value = (const uint8_t *)PyBytes_AS_STRING(items[i]);
        pairs[i].size = (size_t)PyBytes_GET_SIZE(items[i]);
    }
    uint8_t root[32];
    if (trie_root(pairs, (size_t)n, root)) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize((const char *)root, 32);
done:
    free(pairs);
    Py_DECREF(seq);
    return result;
}

/* Receipts encoded into ``enc`` (its length bounds a batch: memory is a few MB, whatever the blocks hold). */
#define BATCH_BYTES ((size_t)8 << 20)

/* The roots of a batch's blocks, appended to ``result`` as (block, root): ``n`` receipts from the batch's first
 * (``first``, its row), ``ends[i]`` where receipt i's encoding ends in ``enc``. Every leaf of every block's trie is
 * encoded, then all are hashed together (keccak_many, without the GIL), then each root is built from them. 0, or -1
 * with an exception set. */
static int batch_roots(Pair *pairs, const size_t *ends, size_t n, const IntCol *blocks, Py_ssize_t first, Buf *enc,
                       PyObject *result) {
    Buf nodes = {0};
    Hashing *items = calloc(n + 1, sizeof(Hashing));
    int rc = -1;
    if (!items) goto nomem;
    for (size_t i = 0; i < n; i++) { /* the encodings are final (the buffer no longer moves) */
        size_t begin = i ? ends[i - 1] : 0;
        pairs[i] = (Pair){.value = enc->data + begin, .size = ends[i] - begin};
    }
    for (size_t start = 0; start < n;) {
        size_t stop = start;
        while (stop < n && int_get(blocks, first + (Py_ssize_t)stop) == int_get(blocks, first + (Py_ssize_t)start))
            stop++;
        trie_keys(pairs + start, stop - start);
        if (prepare_leaves(pairs + start, stop - start, 0, &nodes)) goto nomem;
        start = stop;
    }
    size_t hashed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pairs[i].prepared) continue;
        pairs[i].node = nodes.data + pairs[i].node_at;
        if (pairs[i].node_len >= 32) items[hashed++] = (Hashing){pairs[i].node, pairs[i].node_len, pairs[i].hash};
    }
    Py_BEGIN_ALLOW_THREADS
    keccak_many(items, hashed, 1);
    Py_END_ALLOW_THREADS
    for (size_t start = 0; start < n;) {
        int64_t block = int_get(blocks, first + (Py_ssize_t)start);
        size_t stop = start;
        while (stop < n && int_get(blocks, first + (Py_ssize_t)stop) == block) stop++;
        uint8_t root[32];
        if (trie_hash(pairs + start, stop - start, root)) goto nomem;
        PyObject *entry = Py_BuildValue("(Ly#)", (long long)block, (const char *)root, (Py_ssize_t)32);
        if (!entry || PyList_Append(result, entry)) {
            Py_XDECREF(entry);
            goto done;
        }
        Py_DECREF(entry);
        start = stop;
    }
    rc = 0;
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(items);
    free(nodes.data);
    return rc;
}

/* receipts_roots(r_block, r_tx, r_type, r_status, r_root, r_cumulative, r_bloom,
 *                l_block, l_tx, l_address, l_topic_offsets, l_topics, l_data) -> list of (block, root)
 * Receipts sorted by (block, transaction index), logs by (block, transaction index, log index); a receipt's logs are
 * those with its block and index. r_status -1 means no status (pre-Byzantium): the receipt holds its root instead. */
static PyObject *py_receipts_roots(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t nr, nl;
    PyObject *s[13];
    if (!PyArg_ParseTuple(args, "nnOOOOOOOOOOOOO", &nr, &nl, &s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7],
                          &s[8], &s[9], &s[10], &s[11], &s[12]))
        return NULL;
    IntCol rb = {0}, rt = {0}, rk = {0}, rs = {0}, rc = {0}, lb = {0}, lt = {0}, to = {0};
    BinCol rr = {0}, rbl = {0}, la = {0}, ltp = {0}, ld = {0};
    PyObject *result = NULL;
    Pair *pairs = NULL;
    size_t *ends = NULL;
    Buf enc = {0};
    if (int_col(s[0], &rb, nr) || int_col(s[1], &rt, nr) || int_col(s[2], &rk, nr) || int_col(s[3], &rs, nr) ||
        bin_col(s[4], &rr) || int_col(s[5], &rc, nr) || bin_col(s[6], &rbl) || int_col(s[7], &lb, nl) ||
        int_col(s[8], &lt, nl) || bin_col(s[9], &la) || int_col(s[10], &to, nl + 1) || bin_col(s[11], &ltp) ||
        bin_col(s[12], &ld))
        goto done;
    result = PyList_New(0);
    pairs = calloc((size_t)nr + 1, sizeof(Pair));
    ends = calloc((size_t)nr + 1, sizeof(size_t));
    if (!result || !pairs || !ends) {
        if (result) PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t j = 0, batch = 0; /* the next log; the first receipt not yet in a root */
    for (Py_ssize_t start = 0; start < nr;) {
        int64_t block = int_get(&rb, start);
        Py_ssize_t stop = start;
        for (; stop < nr && int_get(&rb, stop) == block; stop++) {
            int64_t tx = int_get(&rt, stop);
            while (j < nl && (int_get(&lb, j) < block || (int_get(&lb, j) == block && int_get(&lt, j) < tx))) j++;
            Py_ssize_t first = j, last = j;
            while (last < nl && int_get(&lb, last) == block && int_get(&lt, last) == tx) last++;
            j = last;
            /* Payload sizes first: each log, the logs' list, then the receipt. */
            size_t logs_payload = 0;
            for (Py_ssize_t k = first; k < last; k++) {
                const uint8_t *p;
                size_t n, topics = 0, log = 0;
                if (bin_get(&la, k, &p, &n)) goto fail;
                log += str_size(p, n);
                int64_t t0 = int_get(&to, k), t1 = int_get(&to, k + 1);
                for (int64_t t = t0; t < t1; t++) {
                    if (bin_get(&ltp, (Py_ssize_t)t, &p, &n)) goto fail;
                    topics += str_size(p, n);
                }
                log += header_size(topics) + topics;
                if (bin_get(&ld, k, &p, &n)) goto fail;
                log += str_size(p, n);
                logs_payload += header_size(log) + log;
            }
            uint8_t status_raw[8], cum_raw[8];
            const uint8_t *outcome, *bloom;
            size_t outcome_n, bloom_n;
            int64_t status = int_get(&rs, stop);
            if (status < 0) {
                if (bin_get(&rr, stop, &outcome, &outcome_n)) goto fail;
            } else {
                outcome_n = uint_bytes((uint64_t)status, status_raw);
                outcome = status_raw;
            }
            size_t cum_n = uint_bytes((uint64_t)int_get(&rc, stop), cum_raw);
            if (bin_get(&rbl, stop, &bloom, &bloom_n)) goto fail;
            size_t payload = str_size(outcome, outcome_n) + str_size(cum_raw, cum_n) + str_size(bloom, bloom_n) +
                             header_size(logs_payload) + logs_payload;
            int64_t kind = int_get(&rk, stop);
            if (kind != 0) {
                uint8_t k8 = (uint8_t)kind;
                if (buf_put(&enc, &k8, 1)) goto nomem;
            }
            if (put_header(&enc, payload, 0xC0) || put_str(&enc, outcome, outcome_n) ||
                put_str(&enc, cum_raw, cum_n) || put_str(&enc, bloom, bloom_n) ||
                put_header(&enc, logs_payload, 0xC0))
                goto nomem;
            for (Py_ssize_t k = first; k < last; k++) {
                const uint8_t *a, *d, *p;
                size_t an, dn, n, topics = 0;
                bin_get(&la, k, &a, &an);
                bin_get(&ld, k, &d, &dn);
                int64_t t0 = int_get(&to, k), t1 = int_get(&to, k + 1);
                for (int64_t t = t0; t < t1; t++) {
                    bin_get(&ltp, (Py_ssize_t)t, &p, &n);
                    topics += str_size(p, n);
                }
                if (put_header(&enc, str_size(a, an) + header_size(topics) + topics + str_size(d, dn), 0xC0) ||
                    put_str(&enc, a, an) || put_header(&enc, topics, 0xC0))
                    goto nomem;
                for (int64_t t = t0; t < t1; t++) {
                    bin_get(&ltp, (Py_ssize_t)t, &p, &n);
                    if (put_str(&enc, p, n)) goto nomem;
                }
                if (put_str(&enc, d, dn)) goto nomem;
            }
            ends[stop] = enc.len;
        }
        start = stop;
        if (enc.len < BATCH_BYTES && start < nr) continue;
        /* A batch of blocks encoded: their roots, the leaves of all their tries hashed together. */
        if (batch_roots(pairs + batch, ends + batch, (size_t)(start - batch), &rb, batch, &enc, result)) goto fail;
        batch = start;
        enc.len = 0;
    }
    goto done;
nomem:
    PyErr_NoMemory();
fail:
    Py_CLEAR(result);
done:
    free(pairs);
    free(ends);
    free(enc.data);
    int_release(&rb), int_release(&rt), int_release(&rk), int_release(&rs), int_release(&rc);
    int_release(&lb), int_release(&lt), int_release(&to);
    bin_release(&rr), bin_release(&rbl), bin_release(&la), bin_release(&ltp), bin_release(&ld);
    return result;
}

/* ---------- blooms ---------- */

/* The same few contracts and event signatures fill most blocks' logs: each distinct item's bits are kept in a small
 * open-addressed table (items up to 32 bytes; when it fills up, the rest are hashed each time). */
#define SLOTS 8192
typedef struct {
    uint8_t used, len;
    uint16_t bits[3];
    uint8_t key[32];
} Slot;

static void bloom_bits(const uint8_t *p, size_t n, uint16_t bits[3]) {
    uint8_t h[32];
    keccak256(p, n, h);
    for (int i = 0; i < 3; i++) bits[i] = (uint16_t)(((h[2 * i] << 8) | h[2 * i + 1]) & 2047);
}

static void bloom_add(uint8_t *bloom, Slot *table, size_t *filled, const uint8_t *p, size_t n) {
    uint16_t bits[3];
    if (n <= 32) {
        uint64_t hash = 1469598103934665603ULL;
        for (size_t i = 0; i < n; i++) hash = (hash ^ p[i]) * 1099511628211ULL;
        for (size_t probe = 0, slot = (size_t)(hash ^ (hash >> 29)) & (SLOTS - 1); probe < 16;
             probe++, slot = (slot + 1) & (SLOTS - 1)) {
            Slot *s = &table[slot];
            if (!s->used) {
                if (*filled >= SLOTS * 3 / 4) break;
                bloom_bits(p, n, s->bits);
                memcpy(s->key, p, n);
                s->len = (uint8_t)n;
                s->used = 1;
                (*filled)++;
                memcpy(bits, s->bits, sizeof(bits));
                goto set;
            }
            if (s->len == n && memcmp(s->key, p, n) == 0) {
                memcpy(bits, s->bits, sizeof(bits));
                goto set;
            }
        }
    }
    bloom_bits(p, n, bits);
set:
    for (int i = 0; i < 3; i++) bloom[255 - bits[i] / 8] |= (uint8_t)(1 << (bits[i] % 8));
}

/* blooms(groups, rows, group, address, topic_offsets, topics) -> bytes of groups * 256: the bloom of each group's
 * logs (group[i] the log's group, -1 for none). */
static PyObject *py_blooms(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t ng, nl;
    PyObject *s[4];
    if (!PyArg_ParseTuple(args, "nnOOOO", &ng, &nl, &s[0], &s[1], &s[2], &s[3])) return NULL;
    if (ng < 0 || nl < 0) {
        PyErr_SetString(PyExc_ValueError, "negative sizes");
        return NULL;
    }
    IntCol group = {0}, to = {0};
    BinCol address = {0}, topics = {0};
    PyObject *out = NULL;
    Slot *table = NULL;
    if (int_col(s[0], &group, nl) || bin_col(s[1], &address) || int_col(s[2], &to, nl + 1) || bin_col(s[3], &topics))
        goto done;
    table = calloc(SLOTS, sizeof(Slot));
    out = PyBytes_FromStringAndSize(NULL, ng * 256);
    if (!table || !out) {
        if (out) PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    uint8_t *blooms = (uint8_t *)PyBytes_AS_STRING(out);
    memset(blooms, 0, (size_t)ng * 256);
    size_t filled = 0;
    for (Py_ssize_t i = 0; i < nl; i++) {
        int64_t g = int_get(&group, i);
        if (g < 0) continue;
        if (g >= ng) {
            PyErr_SetString(PyExc_ValueError, "a log's group is out of range");
            Py_CLEAR(out);
            goto done;
        }
        const uint8_t *p;
        size_t n;
        if (bin_get(&address, i, &p, &n)) {
            Py_CLEAR(out);
            goto done;
        }
        bloom_add(blooms + 256 * g, table, &filled, p, n);
        for (int64_t t = int_get(&to, i), end = int_get(&to, i + 1); t < end; t++) {
            if (bin_get(&topics, (Py_ssize_t)t, &p, &n)) {
                Py_CLEAR(out);
                goto done;
            }
            bloom_add(blooms + 256 * g, table, &filled, p, n);
        }
    }
done:
    free(table);
    int_release(&group), int_release(&to);
    bin_release(&address), bin_release(&topics);
    return out;
}

/* ---------- transactions ---------- */

/* A wei column: 32-byte big-endian words (u256="binary", as binary) or decimal128 values (16 bytes, little-endian
 * two's complement). */
typedef struct {
    int decimal;
    BinCol words;
    IntCol dec; /* values read 16 bytes at a time: the int64 reader's buffer, offset counted in 16-byte values */
} WordCol;

static int word_col(PyObject *spec, WordCol *c) {
    memset(c, 0, sizeof(*c));
    PyObject *inner;
    if (!PyArg_ParseTuple(spec, "iO", &c->decimal, &inner)) return -1;
    if (!c->decimal) return bin_col(inner, &c->words);
    PyObject *values;
    if (!PyArg_ParseTuple(inner, "On", &values, &c->dec.offset)) return -1;
    return PyObject_GetBuffer(values, &c->dec.values, PyBUF_SIMPLE);
}

static void word_release(WordCol *c) {
    if (c->decimal)
        int_release(&c->dec);
    else
        bin_release(&c->words);
}

/* Row i's value as minimal big-endian bytes in out[32]: its length, or -1 (negative, too long, out of bounds: the
 * caller leaves the row to the Python encoder, which says what is wrong). No exception is set. */
static int word_get(const WordCol *c, Py_ssize_t i, uint8_t out[32]) {
    uint8_t be[32];
    size_t n;
    if (c->decimal) {
        Py_ssize_t k = c->dec.offset + i;
        if (k < 0 || (size_t)(k + 1) * 16 > (size_t)c->dec.values.len) return -1;
        const uint8_t *p = (const uint8_t *)c->dec.values.buf + 16 * k;
        if (p[15] & 0x80) return -1;
        for (int b = 0; b < 16; b++) be[b] = p[15 - b];
        n = 16;
    } else {
        Py_ssize_t k = c->words.offset + i;
        if (k < 0 || (size_t)(k + 2) * 4 > (size_t)c->words.offsets.len) return -1;
        int32_t a, b;
        memcpy(&a, (const uint8_t *)c->words.offsets.buf + 4 * k, 4);
        memcpy(&b, (const uint8_t *)c->words.offsets.buf + 4 * (k + 1), 4);
        if (a < 0 || b < a || b > c->words.data.len || b - a > 32) return -1;
        n = (size_t)(b - a);
        memcpy(be, (const uint8_t *)c->words.data.buf + a, n);
    }
    size_t skip = 0;
    while (skip < n && be[skip] == 0) skip++;
    memcpy(out, be + skip, n - skip);
    return (int)(n - skip);
}

static int put_uint(Buf *b, uint64_t v) {
    uint8_t raw[8];
    return put_str(b, raw, uint_bytes(v, raw));
}

/* Bytes with their leading zeros dropped (a signature's r and s as integers). */
static int put_trimmed(Buf *b, const uint8_t *p, size_t n) {
    while (n && *p == 0) p++, n--;
    return put_str(b, p, n);
}

/* ``payload`` as an RLP list into ``out``, and ``payload`` emptied for reuse. */
static int put_list(Buf *out, Buf *payload) {
    int rc = put_header(out, payload->len, 0xC0) || buf_put(out, payload->data, payload->len);
    payload->len = 0;
    return rc ? -1 : 0;
}

typedef struct {
    IntCol block, index, type, nonce, gas, chain, v, parity;
    BinCol to, input, r, s;
    WordCol value, price, fee_cap, tip, blob_fee;
    IntCol al_offsets, al_key_offsets;
    BinCol al_address, al_keys;
    IntCol blob_offsets;
    BinCol blobs;
    IntCol au_offsets, au_chain, au_nonce, au_parity;
    BinCol au_address, au_r, au_s;
} TxCols;

#define TRY(x)                                                                                                        \
    if ((x)) return -1

/* The fields every typed transaction's payload shares after its fee fields, up to and with the access list (into
 * ``f``, using ``tmp`` and ``inner`` as scratch). 1: a value the C side does not encode; -1: out of memory/bounds. */
static int put_access_list(const TxCols *c, Py_ssize_t i, Buf *f, Buf *tmp, Buf *inner) {
    const uint8_t *p;
    size_t n;
    int64_t a0 = int_get(&c->al_offsets, i), a1 = int_get(&c->al_offsets, i + 1);
    tmp->len = 0;
    for (int64_t a = a0; a < a1; a++) {
        inner->len = 0;
        Buf keys = {0};
        int64_t k0 = int_get(&c->al_key_offsets, a), k1 = int_get(&c->al_key_offsets, a + 1);
        int rc = 0;
        for (int64_t k = k0; k < k1 && !rc; k++) rc = bin_get(&c->al_keys, (Py_ssize_t)k, &p, &n) || put_str(&keys, p, n);
        if (!rc) rc = bin_get(&c->al_address, (Py_ssize_t)a, &p, &n) || put_str(inner, p, n) || put_list(inner, &keys);
        free(keys.data);
        TRY(rc || put_list(tmp, inner));
    }
    return put_list(f, tmp);
}

/* Row i's encodings: the signed one into ``sig`` and the signed payload into ``uns``. 0, 1 when the row is left to
 * Python (a type or value the C side does not encode), -1 on error (exception set). */
static int encode_tx(const TxCols *c, Py_ssize_t i, Buf *sig, Buf *uns, int *unsigned_ok) {
    Buf f = {0}, tmp = {0}, inner = {0};
    int rc = -1;
    const uint8_t *p;
    size_t n;
    uint8_t w[32];
    int wn;
    int64_t kind = int_get(&c->type, i);
    *unsigned_ok = 1;
    sig->len = uns->len = 0;
#define WORD(col)                                                                                                     \
    if ((wn = word_get(&(col), i, w)) < 0) {                                                                          \
        rc = 1;                                                                                                       \
        goto done;                                                                                                    \
    }                                                                                                                 \
    if (put_str(&f, w, (size_t)wn)) goto done;
#define BIN(col)                                                                                                      \
    if (bin_get(&(col), i, &p, &n) || put_str(&f, p, n)) goto done;
    if (kind < 0 || kind > 4) {
        rc = 1;
        goto done;
    }
    if (kind == 0) {
        if (put_uint(&f, (uint64_t)int_get(&c->nonce, i))) goto done;
        WORD(c->price);
        if (put_uint(&f, (uint64_t)int_get(&c->gas, i))) goto done;
        BIN(c->to);
        WORD(c->value);
        BIN(c->input);
    } else {
        if (put_uint(&f, (uint64_t)int_get(&c->chain, i)) || put_uint(&f, (uint64_t)int_get(&c->nonce, i))) goto done;
        if (kind == 1) {
            WORD(c->price);
        } else {
            WORD(c->tip);
            WORD(c->fee_cap);
        }
        if (put_uint(&f, (uint64_t)int_get(&c->gas, i))) goto done;
        BIN(c->to);
        WORD(c->value);
        BIN(c->input);
        if (put_access_list(c, i, &f, &tmp, &inner)) goto done;
        if (kind == 3) {
            WORD(c->blob_fee);
            int64_t b0 = int_get(&c->blob_offsets, i), b1 = int_get(&c->blob_offsets, i + 1);
            for (int64_t b = b0; b < b1; b++)
                if (bin_get(&c->blobs, (Py_ssize_t)b, &p, &n) || put_str(&tmp, p, n)) goto done;
            if (put_list(&f, &tmp)) goto done;
        }
        if (kind == 4) {
            int64_t a0 = int_get(&c->au_offsets, i), a1 = int_get(&c->au_offsets, i + 1);
            for (int64_t a = a0; a < a1; a++) {
                Py_ssize_t k = (Py_ssize_t)a;
                if (put_uint(&inner, (uint64_t)int_get(&c->au_chain, k)) || bin_get(&c->au_address, k, &p, &n) ||
                    put_str(&inner, p, n) || put_uint(&inner, (uint64_t)int_get(&c->au_nonce, k)) ||
                    put_uint(&inner, (uint64_t)int_get(&c->au_parity, k)) || bin_get(&c->au_r, k, &p, &n) ||
                    put_trimmed(&inner, p, n) || bin_get(&c->au_s, k, &p, &n) || put_trimmed(&inner, p, n) ||
                    put_list(&tmp, &inner))
                    goto done;
            }
            if (put_list(&f, &tmp)) goto done;
        }
    }
    /* The signed payload: legacy with EIP-155's chain id (v >= 35) or without (27, 28); a typed one its fields. */
    int64_t v = int_get(&c->v, i), parity = int_get(&c->parity, i);
    if (kind == 0) {
        if (v == 27 || v == 28) {
            if (buf_put(&tmp, f.data, f.len) || put_list(uns, &tmp)) goto done;
        } else if (v >= 35) {
            uint8_t empty = 0x80;
            if (buf_put(&tmp, f.data, f.len) || put_uint(&tmp, (uint64_t)((v - 35) / 2)) || buf_put(&tmp, &empty, 1) ||
                buf_put(&tmp, &empty, 1) || put_list(uns, &tmp))
                goto done;
        } else {
            *unsigned_ok = 0; /* Python's encoder refuses it, and says so */
        }
        if (v < 0) {
            rc = 1;
            goto done;
        }
        if (put_uint(&f, (uint64_t)v)) goto done;
    } else {
        uint8_t k8 = (uint8_t)kind;
        if (buf_put(uns, &k8, 1) || buf_put(&tmp, f.data, f.len) || put_list(uns, &tmp)) goto done;
        int64_t y = parity >= 0 ? parity : v;
        if (y < 0) {
            rc = 1;
            goto done;
        }
        if (buf_put(sig, &k8, 1) || put_uint(&f, (uint64_t)y)) goto done;
    }
    if (bin_get(&c->r, i, &p, &n) || put_trimmed(&f, p, n) || bin_get(&c->s, i, &p, &n) || put_trimmed(&f, p, n) ||
        put_list(sig, &f))
        goto done;
    rc = 0;
done:
#undef WORD
#undef BIN
    free(f.data);
    free(tmp.data);
    free(inner.data);
    return rc;
}

/* transactions_encoded(n, columns...) -> (hashes, signed_hashes, flags, [(block, root)])
 * Rows sorted by (block, transaction index). hashes: keccak of each signed encoding (n * 32 bytes); signed_hashes:
 * keccak of each signed payload; flags[i]: 1 encoded, 2 its signed payload too (0: left to Python). A block's root is
 * given only when every one of its rows was encoded. */
static PyObject *py_transactions_encoded(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t nr, na, nu;
    PyObject *s[30];
    if (!PyArg_ParseTuple(args, "nnnOOOOOOOOOOOOOOOOOOOOOOOOOOOOOO", &nr, &na, &nu, &s[0], &s[1], &s[2], &s[3], &s[4],
                          &s[5], &s[6], &s[7], &s[8], &s[9], &s[10], &s[11], &s[12], &s[13], &s[14], &s[15], &s[16],
                          &s[17], &s[18], &s[19], &s[20], &s[21], &s[22], &s[23], &s[24], &s[25], &s[26], &s[27],
                          &s[28], &s[29], &s[30]))
        return NULL;
    if (nr < 0 || na < 0 || nu < 0) {
        PyErr_SetString(PyExc_ValueError, "negative sizes");
        return NULL;
    }
    TxCols c;
    memset(&c, 0, sizeof(c));
    PyObject *result = NULL, *hashes = NULL, *payloads = NULL, *flags = NULL, *roots = NULL;
    Pair *pairs = NULL;
    size_t *ends = NULL;
    Buf enc = {0}, sig = {0}, uns = {0};
    if (int_col(s[0], &c.block, nr) || int_col(s[1], &c.index, nr) || int_col(s[2], &c.type, nr) ||
        int_col(s[3], &c.nonce, nr) || int_col(s[4], &c.gas, nr) || int_col(s[5], &c.chain, nr) ||
        int_col(s[6], &c.v, nr) || int_col(s[7], &c.parity, nr) || bin_col(s[8], &c.to) || bin_col(s[9], &c.input) ||
        bin_col(s[10], &c.r) || bin_col(s[11], &c.s) || word_col(s[12], &c.value) || word_col(s[13], &c.price) ||
        word_col(s[14], &c.fee_cap) || word_col(s[15], &c.tip) || word_col(s[16], &c.blob_fee) ||
        int_col(s[17], &c.al_offsets, nr + 1) || bin_col(s[18], &c.al_address) ||
        int_col(s[19], &c.al_key_offsets, na + 1) || bin_col(s[20], &c.al_keys) ||
        int_col(s[21], &c.blob_offsets, nr + 1) || bin_col(s[22], &c.blobs) || int_col(s[23], &c.au_offsets, nr + 1) ||
        int_col(s[24], &c.au_chain, nu) || bin_col(s[25], &c.au_address) || int_col(s[26], &c.au_nonce, nu) ||
        int_col(s[27], &c.au_parity, nu) || bin_col(s[28], &c.au_r) || bin_col(s[29], &c.au_s))
        goto done;
    hashes = PyBytes_FromStringAndSize(NULL, nr * 32);
    payloads = PyBytes_FromStringAndSize(NULL, nr * 32);
    flags = PyBytes_FromStringAndSize(NULL, nr);
    roots = PyList_New(0);
    pairs = calloc((size_t)nr + 1, sizeof(Pair));
    ends = calloc((size_t)nr + 1, sizeof(size_t));
    if (!hashes || !payloads || !flags || !roots || !pairs || !ends) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    uint8_t *h = (uint8_t *)PyBytes_AS_STRING(hashes), *u = (uint8_t *)PyBytes_AS_STRING(payloads);
    uint8_t *fl = (uint8_t *)PyBytes_AS_STRING(flags);
    memset(u, 0, (size_t)nr * 32);
    for (Py_ssize_t start = 0; start < nr;) {
        int64_t block = int_get(&c.block, start);
        Py_ssize_t stop = start;
        int whole = 1;
        enc.len = 0;
        for (; stop < nr && int_get(&c.block, stop) == block; stop++) {
            int unsigned_ok;
            int rc = encode_tx(&c, stop, &sig, &uns, &unsigned_ok);
            if (rc < 0) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                goto done;
            }
            if (rc > 0) {
                fl[stop] = 0;
                memset(h + 32 * stop, 0, 32);
                whole = 0;
                ends[stop - start] = enc.len;
                continue;
            }
            keccak256(sig.data, sig.len, h + 32 * stop);
            fl[stop] = 1;
            if (unsigned_ok) {
                keccak256(uns.data, uns.len, u + 32 * stop);
                fl[stop] |= 2;
            }
            if (buf_put(&enc, sig.data, sig.len)) {
                PyErr_NoMemory();
                goto done;
            }
            ends[stop - start] = enc.len;
        }
        if (whole) {
            for (Py_ssize_t i = start; i < stop; i++) {
                size_t begin = i == start ? 0 : ends[i - start - 1];
                pairs[i - start].value = enc.data + begin;
                pairs[i - start].size = ends[i - start] - begin;
            }
            uint8_t root[32];
            if (trie_root(pairs, (size_t)(stop - start), root)) {
                PyErr_NoMemory();
                goto done;
            }
            PyObject *entry = Py_BuildValue("(Ly#)", (long long)block, (const char *)root, (Py_ssize_t)32);
            if (!entry || PyList_Append(roots, entry)) {
                Py_XDECREF(entry);
                goto done;
            }
            Py_DECREF(entry);
        }
        start = stop;
    }
    result = PyTuple_Pack(4, hashes, payloads, flags, roots);
done:
    Py_XDECREF(hashes);
    Py_XDECREF(payloads);
    Py_XDECREF(flags);
    Py_XDECREF(roots);
    free(pairs);
    free(ends);
    free(enc.data);
    free(sig.data);
    free(uns.data);
    IntCol *ints[] = {&c.block, &c.index, &c.type, &c.nonce, &c.gas, &c.chain, &c.v, &c.parity, &c.al_offsets,
                      &c.al_key_offsets, &c.blob_offsets, &c.au_offsets, &c.au_chain, &c.au_nonce, &c.au_parity};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) int_release(ints[k]);
    BinCol *bins[] = {&c.to, &c.input, &c.r, &c.s, &c.al_address, &c.al_keys, &c.blobs, &c.au_address, &c.au_r, &c.au_s};
    for (size_t k = 0; k < sizeof(bins) / sizeof(bins[0]); k++) bin_release(bins[k]);
    word_release(&c.value), word_release(&c.price), word_release(&c.fee_cap), word_release(&c.tip);
    word_release(&c.blob_fee);
    return result;
}

static PyMethodDef METHODS[] = {
    {"keccak256", py_keccak256, METH_O, "keccak256(data) -> the 32-byte keccak-256 digest"},
    {"keccak256_many", py_keccak256_many, METH_VARARGS,
     "keccak256_many(items, wide) -> each one's digest (wide: eight at a time where the CPU has AVX-512F)"},
    {"rlp", py_rlp, METH_O, "rlp(item) -> the RLP of bytes or (nested) lists/tuples of bytes"},
    {"ordered_root", py_ordered_root, METH_O, "ordered_root(values) -> root of the trie of values[i] under RLP(i)"},
    {"receipts_roots", py_receipts_roots, METH_VARARGS, "receipts_roots(...) -> [(block, receiptsRoot)]"},
    {"blooms", py_blooms, METH_VARARGS, "blooms(groups, rows, group, address, topic_offsets, topics) -> bytes"},
    {"transactions_encoded", py_transactions_encoded, METH_VARARGS,
     "transactions_encoded(...) -> (hashes, signed payloads' hashes, flags, [(block, transactionsRoot)])"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native", "Verification's hashing and encoding in C.",
                                    -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) {
#ifdef HAVE_X8
    __builtin_cpu_init();
    simd = __builtin_cpu_supports("avx512f") != 0;
#endif
    PyObject *module = PyModule_Create(&MODULE);
    if (module && PyModule_AddIntConstant(module, "SIMD", simd)) Py_CLEAR(module);
    return module;
}

/* JSON-RPC answers straight to Arrow buffers: one pass over the answer's bytes, hex decoded while it is scanned.

The pure path (chainframe.datasets._envelope + _convert) reads every value as a JSON string with Polars, then
converts the strings; this reads the bytes once and writes typed Arrow buffers (validity bitmaps, values, offsets)
that chainframe.datasets._native wraps as arrays without copying.

It never guesses and never raises for bad data: anything it does not take exactly as the pure path would (an
escape in a string, a value out of its column's range, a wrong length, an error envelope, a duplicate key, a
shape it does not know) makes scan() return None, and the caller takes the pure path, whose error messages name
the column and value. Kinds and sizes come from the caller's spec (the column table's kinds).

An answer that is not JSON is declined whole, as the pure path refuses it: every byte is checked once, by the reader
that meets it. Structure, literals and numbers are read to JSON's grammar; a value the spec maps is hex digits (each
one checked as it is decoded) or a number; a key the spec maps is compared byte for byte with its ASCII name; what is
skipped (an unknown key and its value, the items of a counted list, the envelope's other members) goes through
string_end(), which takes a string only if it is UTF-8 with no raw control character and only JSON's escapes. So the
check costs nothing on the values the scan reads and about a memchr on what it skips; a separate validating pass
would read the whole answer again.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../_byte_buffer.h"
#include "../_find_pair.h"
#include "../_json_string.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* K_COUNT: a list's length; its items are null or objects whose keys in its children (K_TEXT) must hold scalars
   (the pure path reads those as text and refuses a list or an object there). K_TEXT stores nothing. K_STRING: a
   string column, the string's bytes as sent (one with an escape is left to the pure path, which unescapes it).
   K_OBJECT: one object (or null) whose keys are its children's columns, a row each (a trace's ``action``); K_U64S: a
   list of unsigned integers (a trace's ``traceAddress``: JSON numbers). */
enum { K_U64 = 0, K_U8 = 1, K_BOOL = 2, K_WEI = 3, K_WORD = 4, K_FIXED = 5, K_DATA = 6, K_HASHES = 7, K_OBJECTS = 8, K_COUNT = 9, K_TEXT = 10, K_STRING = 11, K_OBJECT = 12, K_U64S = 13 };
enum { MODE_RESULT = 0, MODE_BATCH = 1, MODE_BATCH_LISTS = 2 };
/* A K_U64 column's size: either form (0), a JSON number only (U64_NUMBER) or a hex string only (U64_TEXT), where the
   pure path reads the key with a type (Polars' schema of a trace_block document: Int64 or String). */
enum { U64_NUMBER = 1, U64_TEXT = 2 };
#define MAX_COLUMNS 64
#define MAX_DEPTH 64

/* FALLBACK: not an exception, the caller takes the pure path. NOMEM: out of memory (raised once the GIL is held). */
#define FALLBACK (-1)
#define NOMEM (-2)

/* NOMEM where the buffer's -1 says memory ran out: the scan's own error code, raised once the GIL is held. */
static int reserve(Buf *b, size_t extra) { return buf_reserve(b, extra) < 0 ? NOMEM : 0; }

struct Spec;

typedef struct {
    const char *key;
    Py_ssize_t keylen;
    int kind, size;
    Buf data, valid, offsets;
    int64_t n, nulls, bits; /* rows; nulls; for K_BOOL: values written to the data bitmap */
    int64_t deferred;       /* leading null rows not written yet (a column absent from every row so far, as a chain
                               family's own column on another chain), written at once by materialize() */
    struct Spec *children;  /* K_OBJECTS: the items' fields; K_OBJECT: the object's; K_COUNT: the items' keys read as
                               text, or NULL */
} Column;

typedef struct Spec {
    Column cols[MAX_COLUMNS];
    int ncols, last;
    unsigned char after[MAX_COLUMNS + 1]; /* 1 + the column whose key came after column i's (at i + 1; at 0: the
                                              first key) in the latest object; 0: not seen */
} Spec;

typedef struct {
    const unsigned char *p, *end;
} Cur;

static signed char HEX[256];
static int16_t PAIRS[65536];

static void init_hex(void) {
    memset(HEX, -1, sizeof HEX);
    for (int i = 0; i < 10; i++) HEX['0' + i] = (signed char)i;
    for (int i = 0; i < 6; i++) {
        HEX['a' + i] = (signed char)(10 + i);
        HEX['A' + i] = (signed char)(10 + i);
    }
    for (int hi = 0; hi < 256; hi++)
        for (int lo = 0; lo < 256; lo++)
            PAIRS[hi << 8 | lo] = (HEX[hi] < 0 || HEX[lo] < 0) ? -1 : (int16_t)(HEX[hi] << 4 | HEX[lo]);
}

static inline void ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t')) c->p++;
}

static inline int eat(Cur *c, unsigned char ch) {
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static inline int literal(Cur *c, const char *word, size_t n) {
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* A string's raw bytes, between its quotes; a string with an escape is not taken. ``hex``: the caller reads only hex
digits from it (a backslash is not one, so it is refused there): no separate search for escapes. */
static int string_raw(Cur *c, const unsigned char **s, size_t *n, int hex) {
    ws(c);
    if (c->p >= c->end || *c->p != '"') return FALLBACK;
    const unsigned char *start = ++c->p;
    const unsigned char *q = memchr(start, '"', (size_t)(c->end - start));
    if (q == NULL) return FALLBACK;
    if (!hex && memchr(start, '\\', (size_t)(q - start)) != NULL) return FALLBACK;
    *s = start;
    *n = (size_t)(q - start);
    c->p = q + 1;
    return 0;
}

/* The closing quote of a string whose contents start at p, every byte checked as JSON allows: UTF-8, no raw control
   character, escapes only JSON's (\u and four hex digits, not a surrogate: those are left to the pure path). NULL if
   the string is not one JSON takes, or not closed (_json_string.h, shared with rpc/_envelopes.c). */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end) {
    return json_string_end(p, end, 1);
}

/* A key the spec does not map, read by string_raw (so with no escape, ending at its first quote): JSON's text? */
static inline int valid_key(const unsigned char *k, size_t kn, const unsigned char *end) {
    return string_end(k, end) == k + kn;
}

/* A number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int skip_number(Cur *c) {
    const unsigned char *p = c->p, *end = c->end;
    if (p < end && *p == '-') p++;
    if (p >= end || *p < '0' || *p > '9') return FALLBACK;
    if (*p++ != '0')
        while (p < end && *p >= '0' && *p <= '9') p++;
    if (p < end && *p == '.') {
        const unsigned char *digits = ++p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        if (p == digits) return FALLBACK;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        const unsigned char *digits = p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        if (p == digits) return FALLBACK;
    }
    c->p = p;
    return 0;
}

/* A value the scan does not read, checked as JSON (see string_end). */
static int skip_value(Cur *c, int depth) {
    if (depth > MAX_DEPTH) return FALLBACK;
    ws(c);
    if (c->p >= c->end) return FALLBACK;
    unsigned char ch = *c->p;
    if (ch == '"') {
        const unsigned char *q = string_end(c->p + 1, c->end);
        if (q == NULL) return FALLBACK;
        c->p = q + 1;
        return 0;
    }
    if (ch == '{' || ch == '[') {
        unsigned char close = ch == '{' ? '}' : ']';
        c->p++;
        if (eat(c, close)) return 0;
        for (;;) {
            if (ch == '{') {
                ws(c);
                if (c->p >= c->end || *c->p != '"') return FALLBACK; /* a key is a string */
                if (skip_value(c, depth + 1) < 0) return FALLBACK;   /* escapes allowed */
                if (!eat(c, ':')) return FALLBACK;
            }
            if (skip_value(c, depth + 1) < 0) return FALLBACK;
            if (eat(c, ',')) continue;
            if (eat(c, close)) return 0;
            return FALLBACK;
        }
    }
    if (literal(c, "true", 4) || literal(c, "false", 5) || literal(c, "null", 4)) return 0;
    return skip_number(c);
}

/* ---- appending values ---------------------------------------------------------------------------------------- */

static int width(const Column *col) {
    switch (col->kind) {
        case K_U64:
        case K_COUNT: return 8;
        case K_U8: return 1;
        case K_WEI: return 16;
        case K_WORD: return 32;
        case K_FIXED: return col->size;
        default: return 0;
    }
}

static int push_bit(Buf *b, int64_t i, int set) {
    if (i % 8 == 0) {
        if (reserve(b, 1) < 0) return NOMEM;
        b->data[b->len++] = 0;
    }
    if (set) b->data[i / 8] |= (unsigned char)(1u << (i % 8));
    return 0;
}

static int push_offset(Column *col, int64_t value) {
    if (value > INT32_MAX) return FALLBACK;
    if (reserve(&col->offsets, 4) < 0) return NOMEM;
    int32_t v = (int32_t)value;
    memcpy(col->offsets.data + col->offsets.len, &v, 4);
    col->offsets.len += 4;
    return 0;
}

static int64_t last_offset(const Column *col) {
    int32_t v;
    memcpy(&v, col->offsets.data + col->offsets.len - 4, 4);
    return v;
}

/* The row is done: its validity bit. */
static int finish(Column *col, int valid) {
    int r = push_bit(&col->valid, col->n, valid);
    if (r < 0) return r;
    if (!valid) col->nulls++;
    col->n++;
    return 0;
}

/* The deferred leading nulls written out, in bulk: zeroed values (or empty spans) and clear validity bits. Eleven
   receipt columns null on every Ethereum row cost the scan 3-4% written row by row (scripts/bench decode's answers). */
static int materialize(Column *col) {
    int r;
    int64_t n = col->deferred;
    if (n == 0) return 0;
    col->deferred = 0;
    size_t bits = (size_t)(n + 7) / 8;
    if ((r = reserve(&col->valid, bits)) < 0) return r;
    memset(col->valid.data + col->valid.len, 0, bits);
    col->valid.len += bits;
    size_t w = (size_t)width(col);
    if (w) {
        if ((r = reserve(&col->data, w * (size_t)n)) < 0) return r;
        memset(col->data.data + col->data.len, 0, w * (size_t)n);
        col->data.len += w * (size_t)n;
    } else if (col->kind == K_BOOL) {
        if ((r = reserve(&col->data, bits)) < 0) return r;
        memset(col->data.data + col->data.len, 0, bits);
        col->data.len += bits;
        col->bits = n;
    } else {
        for (int64_t i = 0; i < n; i++)
            if ((r = push_offset(col, last_offset(col))) < 0) return r;
    }
    return 0;
}

static int push_null(Column *col) {
    int r;
    if (col->kind == K_OBJECT) { /* a null object: a null row in each of its columns */
        for (int i = 0; i < col->children->ncols; i++)
            if ((r = push_null(&col->children->cols[i])) < 0) return r;
        return finish(col, 0);
    }
    if (col->deferred == col->n && col->kind != K_COUNT) { /* null in every row so far: counted, written later */
        col->deferred++;
        col->n++;
        col->nulls++;
        return 0;
    }
    if (col->kind == K_COUNT) { /* a list's length: no list is no items */
        if ((r = reserve(&col->data, 8)) < 0) return r;
        memset(col->data.data + col->data.len, 0, 8);
        col->data.len += 8;
        return finish(col, 1);
    }
    size_t w = (size_t)width(col);
    if (w) {
        if ((r = reserve(&col->data, w)) < 0) return r;
        memset(col->data.data + col->data.len, 0, w);
        col->data.len += w;
    } else if (col->kind == K_BOOL) {
        if ((r = push_bit(&col->data, col->bits++, 0)) < 0) return r;
    } else if ((r = push_offset(col, last_offset(col))) < 0) { /* data and lists: an empty span */
        return r;
    }
    return finish(col, 0);
}

/* "0x" and exactly n digits (a hash, an address), without looking for the closing quote: it must stand right after
them, and unhex() refuses a quote or backslash among the digits, so this takes what hex_digits() would. */
static int hex_exact(Cur *c, const unsigned char **d, size_t n) {
    ws(c);
    const unsigned char *p = c->p;
    if ((size_t)(c->end - p) < n + 4 || p[0] != '"' || p[1] != '0' || p[2] != 'x' || p[n + 3] != '"') return FALLBACK;
    *d = p + 3;
    c->p = p + n + 4;
    return 0;
}

/* "0x" and the digits after it. */
static int hex_digits(Cur *c, const unsigned char **d, size_t *n) {
    const unsigned char *s;
    size_t len;
    if (string_raw(c, &s, &len, 1) < 0) return FALLBACK;
    if (len < 2 || s[0] != '0' || s[1] != 'x') return FALLBACK;
    *d = s + 2;
    *n = len - 2;
    return 0;
}

static int parse_u64(Cur *c, uint64_t *out) {
    ws(c);
    if (c->p < c->end && *c->p >= '0' && *c->p <= '9') { /* a JSON number (anvil writes some so) */
        uint64_t v = 0;
        const unsigned char *start = c->p;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            uint64_t digit = (uint64_t)(*c->p - '0');
            if (v > (UINT64_MAX - digit) / 10) return FALLBACK;
            v = v * 10 + digit;
            c->p++;
        }
        if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')) return FALLBACK;
        if (c->p - start > 1 && *start == '0') return FALLBACK;
        *out = v;
        return 0;
    }
    const unsigned char *d;
    size_t n;
    if (hex_digits(c, &d, &n) < 0 || n == 0) return FALLBACK;
    while (n > 1 && *d == '0') d++, n--;
    if (n > 16) return FALLBACK;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = HEX[d[i]];
        if (h < 0) return FALLBACK;
        v = (v << 4) | (uint64_t)h;
    }
    *out = v;
    return 0;
}

/* Bytes from hex digits (an even count), into dst: one lookup per pair of digits (PAIRS: -1 where either is not hex).
   Faster than arithmetic on the digits, per byte or eight at a time (measured: 2.4-3.4 GB/s against 1.5-2.0). */
static int unhex(const unsigned char *d, size_t n, unsigned char *dst) {
    for (size_t i = 0; i < n; i += 2) {
        int16_t v = PAIRS[(size_t)d[i] << 8 | d[i + 1]];
        if (v < 0) return FALLBACK;
        dst[i / 2] = (unsigned char)v;
    }
    return 0;
}

static int parse_objects(Cur *c, Spec *spec, int depth);

/* An item of a counted list: null, or an object whose keys among texts (K_TEXT columns; NULL: none) hold scalars. */
static int count_item(Cur *c, const Spec *texts, int depth) {
    if (depth > MAX_DEPTH) return FALLBACK;
    ws(c);
    if (literal(c, "null", 4)) return 0;
    if (!eat(c, '{')) return FALLBACK;
    if (eat(c, '}')) return 0;
    for (;;) {
        const unsigned char *k;
        size_t kn;
        int text = 0;
        if (string_raw(c, &k, &kn, 0) < 0 || !eat(c, ':')) return FALLBACK;
        for (int i = 0; texts && i < texts->ncols && !text; i++)
            text = (size_t)texts->cols[i].keylen == kn && memcmp(texts->cols[i].key, k, kn) == 0;
        if (!text && !valid_key(k, kn, c->end)) return FALLBACK;
        ws(c);
        if (text && c->p < c->end && (*c->p == '{' || *c->p == '[')) return FALLBACK;
        if (skip_value(c, depth + 1) < 0) return FALLBACK;
        if (eat(c, ',')) continue;
        if (eat(c, '}')) return 0;
        return FALLBACK;
    }
}

/* A hash (32 bytes) of a K_HASHES list, appended to the column's values. */
static int hash_item(Cur *c, Column *col) {
    const unsigned char *d;
    int r;
    if (hex_exact(c, &d, 64) < 0) return FALLBACK;
    if ((r = reserve(&col->data, 32)) < 0) return r;
    if (unhex(d, 64, col->data.data + col->data.len) < 0) return FALLBACK;
    col->data.len += 32;
    return 0;
}

/* A number (a JSON number only, as a trace address's) of a K_U64S list, appended to the column's values. */
static int number_item(Cur *c, Column *col) {
    uint64_t v;
    int r;
    ws(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return FALLBACK;
    if (parse_u64(c, &v) < 0) return FALLBACK;
    if ((r = reserve(&col->data, 8)) < 0) return r;
    memcpy(col->data.data + col->data.len, &v, 8);
    col->data.len += 8;
    return 0;
}

/* A JSON list whose items item() appends to the column's values, one after another: the row's offset ends them. */
static int parse_items(Cur *c, Column *col, int (*item)(Cur *, Column *)) {
    int r;
    if (!eat(c, '[')) return FALLBACK;
    int64_t items = last_offset(col);
    if (!eat(c, ']')) {
        for (;;) {
            if ((r = item(c, col)) < 0) return r;
            items++;
            if (eat(c, ',')) continue;
            if (eat(c, ']')) break;
            return FALLBACK;
        }
    }
    if ((r = push_offset(col, items)) < 0) return r;
    return finish(col, 1);
}

static int parse_value(Cur *c, Column *col, int depth) {
    int r;
    ws(c);
    if (literal(c, "null", 4)) return push_null(col);
    if (col->deferred && (r = materialize(col)) < 0) return r;
    switch (col->kind) {
        case K_U64:
        case K_U8: {
            uint64_t v;
            int number = c->p < c->end && *c->p >= '0' && *c->p <= '9';
            if (col->size == U64_NUMBER ? !number : col->size == U64_TEXT && number) return FALLBACK;
            if (parse_u64(c, &v) < 0) return FALLBACK;
            if (col->kind == K_U8) {
                if (v > 255) return FALLBACK;
                if ((r = reserve(&col->data, 1)) < 0) return r;
                col->data.data[col->data.len++] = (unsigned char)v;
            } else {
                if ((r = reserve(&col->data, 8)) < 0) return r;
                memcpy(col->data.data + col->data.len, &v, 8); /* Arrow's buffers are in the machine's byte order */
                col->data.len += 8;
            }
            return finish(col, 1);
        }
        case K_BOOL: {
            int v;
            if (literal(c, "true", 4)) v = 1;
            else if (literal(c, "false", 5)) v = 0;
            else return FALLBACK;
            if ((r = push_bit(&col->data, col->bits++, v)) < 0) return r;
            return finish(col, 1);
        }
        case K_WEI: { /* decimal128(38, 0): at most 10^38 - 1, or the pure path names the value */
            const unsigned char *d;
            size_t n;
            if (hex_digits(c, &d, &n) < 0 || n == 0) return FALLBACK;
            while (n > 1 && *d == '0') d++, n--;
            if (n > 32) return FALLBACK;
            unsigned __int128 v = 0;
            for (size_t i = 0; i < n; i++) {
                int h = HEX[d[i]];
                if (h < 0) return FALLBACK;
                v = (v << 4) | (unsigned __int128)h;
            }
            const unsigned __int128 limit = ((unsigned __int128)0x4B3B4CA85A86C47AULL << 64) | 0x098A224000000000ULL;
            if (v >= limit) return FALLBACK; /* 10^38 */
            if ((r = reserve(&col->data, 16)) < 0) return r;
            for (int i = 0; i < 16; i++) col->data.data[col->data.len + i] = (unsigned char)(v >> (8 * i));
            col->data.len += 16;
            return finish(col, 1);
        }
        case K_WORD: { /* up to 64 digits, left-padded to 32 bytes ("0x" is zero, as on the pure path) */
            const unsigned char *d;
            size_t n;
            if (hex_digits(c, &d, &n) < 0 || n > 64) return FALLBACK;
            unsigned char padded[64];
            memset(padded, '0', 64 - n);
            memcpy(padded + 64 - n, d, n);
            if ((r = reserve(&col->data, 32)) < 0) return r;
            if (unhex(padded, 64, col->data.data + col->data.len) < 0) return FALLBACK;
            col->data.len += 32;
            return finish(col, 1);
        }
        case K_FIXED: {
            const unsigned char *d;
            size_t n;
            n = (size_t)col->size * 2;
            if (hex_exact(c, &d, n) < 0) return FALLBACK;
            if ((r = reserve(&col->data, (size_t)col->size)) < 0) return r;
            if (unhex(d, n, col->data.data + col->data.len) < 0) return FALLBACK;
            col->data.len += (size_t)col->size;
            return finish(col, 1);
        }
        case K_DATA: {
            const unsigned char *d;
            size_t n;
            if (hex_digits(c, &d, &n) < 0 || n % 2) return FALLBACK;
            if ((r = reserve(&col->data, n / 2)) < 0) return r;
            if (unhex(d, n, col->data.data + col->data.len) < 0) return FALLBACK;
            col->data.len += n / 2;
            if ((r = push_offset(col, (int64_t)col->data.len)) < 0) return r;
            return finish(col, 1);
        }
        case K_STRING: { /* only a JSON string (a number or literal: the pure path), checked as JSON text */
            const unsigned char *s;
            size_t n;
            if (string_raw(c, &s, &n, 0) < 0 || string_end(s, c->end) != s + n) return FALLBACK;
            if ((r = reserve(&col->data, n)) < 0) return r;
            if (n) memcpy(col->data.data + col->data.len, s, n);
            col->data.len += n;
            if ((r = push_offset(col, (int64_t)col->data.len)) < 0) return r;
            return finish(col, 1);
        }
        case K_HASHES: return parse_items(c, col, hash_item);
        case K_COUNT: {
            if (!eat(c, '[')) return FALLBACK;
            uint64_t items = 0;
            if (!eat(c, ']')) {
                for (;;) {
                    if (count_item(c, col->children, depth + 1) < 0) return FALLBACK;
                    items++;
                    if (eat(c, ',')) continue;
                    if (eat(c, ']')) break;
                    return FALLBACK;
                }
            }
            if ((r = reserve(&col->data, 8)) < 0) return r;
            memcpy(col->data.data + col->data.len, &items, 8);
            col->data.len += 8;
            return finish(col, 1);
        }
        case K_OBJECTS: {
            if (!eat(c, '[')) return FALLBACK;
            if (!eat(c, ']')) {
                for (;;) {
                    if ((r = parse_objects(c, col->children, depth + 1)) < 0) return r;
                    if (eat(c, ',')) continue;
                    if (eat(c, ']')) break;
                    return FALLBACK;
                }
            }
            if ((r = push_offset(col, col->children->ncols ? col->children->cols[0].n : 0)) < 0) return r;
            return finish(col, 1);
        }
        case K_OBJECT: {
            ws(c);
            if (c->p >= c->end || *c->p != '{') return FALLBACK;
            if ((r = parse_objects(c, col->children, depth + 1)) < 0) return r;
            return finish(col, 1);
        }
        case K_U64S: return parse_items(c, col, number_item);
    }
    return FALLBACK;
}

/* The column of key k, or -1. Objects mostly repeat one key order: first the column that came after the previous
   key's in the latest object, learned as objects are read (the answer's order, which need not be the spec's). */
static inline int find(Spec *spec, const unsigned char *k, size_t kn) {
    unsigned char *next = &spec->after[spec->last + 1];
    if (*next) {
        Column *g = &spec->cols[*next - 1];
        if ((size_t)g->keylen == kn && memcmp(g->key, k, kn) == 0) return *next - 1;
    }
    for (int i = 0; i < spec->ncols; i++) {
        Column *col = &spec->cols[i];
        if ((size_t)col->keylen == kn && memcmp(col->key, k, kn) == 0) {
            *next = (unsigned char)(i + 1);
            return i;
        }
    }
    return -1;
}

/* One object: a row of the spec's columns (an absent key is null, an unknown one skipped). */
static int parse_objects(Cur *c, Spec *spec, int depth) {
    int r;
    if (depth > MAX_DEPTH) return FALLBACK;
    if (!eat(c, '{')) return FALLBACK;
    char seen[MAX_COLUMNS] = {0};
    spec->last = -1;
    if (!eat(c, '}')) {
        for (;;) {
            const unsigned char *k;
            size_t kn;
            if (string_raw(c, &k, &kn, 0) < 0 || !eat(c, ':')) return FALLBACK;
            int i = find(spec, k, kn);
            if (i < 0) { /* a key the pure path does not read either: it must still be JSON's text */
                if (!valid_key(k, kn, c->end) || skip_value(c, depth + 1) < 0) return FALLBACK;
            } else {
                if (seen[i]) return FALLBACK; /* a key twice: the pure path decides */
                seen[i] = 1;
                spec->last = i;
                if ((r = parse_value(c, &spec->cols[i], depth)) < 0) return r;
            }
            if (eat(c, ',')) continue;
            if (eat(c, '}')) break;
            return FALLBACK;
        }
    }
    for (int i = 0; i < spec->ncols; i++)
        if (!seen[i] && (r = push_null(&spec->cols[i])) < 0) return r;
    return 0;
}

/* A list of row objects; null is no rows. */
static int parse_rows(Cur *c, Spec *spec) {
    int r;
    ws(c);
    if (literal(c, "null", 4)) return 0;
    if (!eat(c, '[')) return FALLBACK;
    if (eat(c, ']')) return 0;
    for (;;) {
        if ((r = parse_objects(c, spec, 0)) < 0) return r;
        if (eat(c, ',')) continue;
        if (eat(c, ']')) return 0;
        return FALLBACK;
    }
}

static int64_t rows_of(const Spec *spec) { return spec->ncols ? spec->cols[0].n : 0; }

/* An envelope: its result parsed as mode says, its id into *id. An error envelope is not taken. */
static int parse_envelope(Cur *c, Spec *spec, int mode, int64_t *id, int *has_id) {
    int r;
    if (!eat(c, '{')) return FALLBACK;
    int has_result = 0;
    *has_id = 0;
    if (eat(c, '}')) return FALLBACK;
    for (;;) {
        const unsigned char *k;
        size_t kn;
        if (string_raw(c, &k, &kn, 0) < 0 || !eat(c, ':')) return FALLBACK;
        if (kn == 6 && memcmp(k, "result", 6) == 0) {
            if (has_result) return FALLBACK;
            has_result = 1;
            ws(c);
            if (mode == MODE_BATCH) {
                if (!literal(c, "null", 4) && (r = parse_objects(c, spec, 0)) < 0) return r;
            } else if ((r = parse_rows(c, spec)) < 0) {
                return r;
            }
        } else if (kn == 2 && memcmp(k, "id", 2) == 0) {
            uint64_t v;
            ws(c);
            if (c->p >= c->end || *c->p < '0' || *c->p > '9' || parse_u64(c, &v) < 0 || v > INT64_MAX)
                return FALLBACK;
            *id = (int64_t)v;
            *has_id = 1;
        } else if (kn == 5 && memcmp(k, "error", 5) == 0) {
            return FALLBACK;
        } else if (!valid_key(k, kn, c->end) || skip_value(c, 1) < 0) {
            return FALLBACK;
        }
        if (eat(c, ',')) continue;
        if (eat(c, '}')) break;
        return FALLBACK;
    }
    return has_result ? 0 : FALLBACK;
}

/* One answer's rows, appended to the spec's columns, and each row's id (of its envelope) to ids. */
static int parse_body(Cur *c, Spec *spec, int mode, Buf *ids) {
    int r;
    int64_t id = 0;
    int has_id;
    if (mode == MODE_RESULT) {
        if ((r = parse_envelope(c, spec, MODE_BATCH_LISTS, &id, &has_id)) < 0) return r;
    } else {
        if (!eat(c, '[')) return FALLBACK;
        if (!eat(c, ']')) {
            for (;;) {
                int64_t before = rows_of(spec);
                if ((r = parse_envelope(c, spec, mode, &id, &has_id)) < 0) return r;
                if (!has_id) return FALLBACK;
                for (int64_t i = before; i < rows_of(spec); i++) {
                    if ((r = reserve(ids, 8)) < 0) return r;
                    memcpy(ids->data + ids->len, &id, 8);
                    ids->len += 8;
                }
                if (eat(c, ',')) continue;
                if (eat(c, ']')) break;
                return FALLBACK;
            }
        }
    }
    ws(c);
    return c->p == c->end ? 0 : FALLBACK;
}

/* ---- spec in, buffers out --------------------------------------------------------------------------------------- */

static void free_spec(Spec *spec) {
    for (int i = 0; i < spec->ncols; i++) {
        Column *col = &spec->cols[i];
        free(col->data.data);
        free(col->valid.data);
        free(col->offsets.data);
        if (col->children) {
            free_spec(col->children);
            free(col->children);
        }
    }
    spec->ncols = 0;
}

/* spec: a sequence of (key: str, kind: int, size: int, children: spec or None). Keys are borrowed from it. */
static int load_spec(PyObject *seq, Spec *spec) {
    PyObject *fast = PySequence_Fast(seq, "the spec must be a sequence");
    if (fast == NULL) return NOMEM;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int r = 0;
    if (n > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "too many columns for the native scanner");
        Py_DECREF(fast);
        return NOMEM;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        PyObject *children = NULL;
        Column *col = &spec->cols[i];
        memset(col, 0, sizeof *col);
        spec->ncols = (int)i + 1;
        if (!PyArg_ParseTuple(item, "s#iiO", &col->key, &col->keylen, &col->kind, &col->size, &children)) {
            r = NOMEM;
            break;
        }
        if (col->kind == K_DATA || col->kind == K_STRING || col->kind == K_HASHES || col->kind == K_OBJECTS ||
            col->kind == K_U64S) {
            if ((r = push_offset(col, 0)) < 0) break;
        }
        if (col->kind == K_OBJECTS || col->kind == K_OBJECT || (col->kind == K_COUNT && children != Py_None)) {
            col->children = calloc(1, sizeof(Spec));
            if (col->children == NULL) {
                r = NOMEM;
                break;
            }
            if ((r = load_spec(children, col->children)) < 0) break;
        }
    }
    Py_DECREF(fast);
    return r;
}

/* A column's buffer handed to Python without a copy: it owns the scan's memory and frees it when the last reference
   and view are gone; pyarrow wraps it (py_buffer) as it is. Copying every buffer into a bytes object cost a memmove of
   the whole decoded output, about 40% of an eth_getLogs answer's size, and fresh pages for it. */
typedef struct {
    PyObject_HEAD
    unsigned char *p;
    Py_ssize_t len;
} Owned;

static const unsigned char EMPTY[1] = {0};

static void owned_dealloc(PyObject *self) {
    free(((Owned *)self)->p);
    Py_TYPE(self)->tp_free(self);
}

static int owned_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    Owned *o = (Owned *)self;
    return PyBuffer_FillInfo(view, self, o->p ? (void *)o->p : (void *)EMPTY, o->len, 1, flags);
}

static Py_ssize_t owned_length(PyObject *self) { return ((Owned *)self)->len; }

static PyBufferProcs OWNED_BUFFER = {owned_getbuffer, NULL};
static PySequenceMethods OWNED_SEQUENCE = {.sq_length = owned_length};

static PyTypeObject OwnedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chainframe.datasets._native_rows.Owned",
    .tp_basicsize = sizeof(Owned),
    .tp_dealloc = owned_dealloc,
    .tp_as_sequence = &OWNED_SEQUENCE,
    .tp_as_buffer = &OWNED_BUFFER,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A scanned column's bytes (read-only buffer; len() is its size), freed with the last reference.",
};

/* The buffer's memory, moved into a Python object (b is left empty), shrunk to its length first. */
static PyObject *bytes_of(Buf *b) {
    Owned *o = PyObject_New(Owned, &OwnedType);
    if (o == NULL) return NULL;
    if (b->data != NULL && b->cap > b->len + 4096) {
        unsigned char *q = realloc(b->data, b->len ? b->len : 1);
        if (q != NULL) b->data = q;
    }
    o->p = b->data;
    o->len = (Py_ssize_t)b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return (PyObject *)o;
}

static PyObject *columns_of(Spec *spec);

/* (length, null_count, validity bitmap or None, values, offsets or None, children or None) */
static PyObject *column_of(Column *col) {
    if (materialize(col) < 0) return PyErr_NoMemory();
    PyObject *valid = col->nulls ? bytes_of(&col->valid) : (Py_INCREF(Py_None), Py_None);
    PyObject *data = bytes_of(&col->data);
    PyObject *offsets = col->offsets.len ? bytes_of(&col->offsets) : (Py_INCREF(Py_None), Py_None);
    PyObject *children = col->kind == K_OBJECTS || col->kind == K_OBJECT ? columns_of(col->children)
                                                                           : (Py_INCREF(Py_None), Py_None);
    if (!valid || !data || !offsets || !children) {
        Py_XDECREF(valid);
        Py_XDECREF(data);
        Py_XDECREF(offsets);
        Py_XDECREF(children);
        return NULL;
    }
    return Py_BuildValue("(LLNNNN)", (long long)col->n, (long long)col->nulls, valid, data, offsets, children);
}

static PyObject *columns_of(Spec *spec) {
    PyObject *out = PyTuple_New(spec->ncols);
    if (out == NULL) return NULL;
    for (int i = 0; i < spec->ncols; i++) {
        PyObject *col = column_of(&spec->cols[i]);
        if (col == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, col);
    }
    return out;
}

/* Rows are put in order by their ids within each answer, and the answers kept in their order, as scanning them one by
   one did: the ids of an answer's rows (from ids[first] on) become keys above every earlier answer's, in the same
   order as the ids. A redone batch's answer numbers its envelopes from 0 again, for one. */
static int order_keys(Buf *ids, size_t first, uint64_t *next_key) {
    size_t end = ids->len / 8;
    if (first == end) return 0;
    int64_t low = INT64_MAX, high = INT64_MIN, v;
    for (size_t i = first; i < end; i++) {
        memcpy(&v, ids->data + 8 * i, 8);
        if (v < low) low = v;
        if (v > high) high = v;
    }
    uint64_t span = (uint64_t)high - (uint64_t)low;
    if (*next_key > (uint64_t)INT64_MAX - span) return FALLBACK; /* ids too far apart to order this way */
    for (size_t i = first; i < end; i++) {
        memcpy(&v, ids->data + 8 * i, 8);
        int64_t key = (int64_t)(*next_key + ((uint64_t)v - (uint64_t)low));
        memcpy(ids->data + 8 * i, &key, 8);
    }
    *next_key += span + 1;
    return 0;
}

static int keys_rise(const Buf *ids) {
    int64_t previous = INT64_MIN, v;
    for (size_t i = 0; i < ids->len / 8; i++) {
        memcpy(&v, ids->data + 8 * i, 8);
        if (v < previous) return 0;
        previous = v;
    }
    return 1;
}

/* The answers of one piece, scanned into one set of columns: the Python that wraps columns into arrays and a table
   runs once per piece, not once per answer (a piece of receipts is about eight 1 MB batch answers). */
static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *bodies_seq, *spec_seq;
    int mode;
    if (!PyArg_ParseTuple(args, "OOi", &bodies_seq, &spec_seq, &mode)) return NULL;
    if (mode < MODE_RESULT || mode > MODE_BATCH_LISTS) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0 (result list), 1 (batch) or 2 (batch of lists)");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(bodies_seq, "the answers must be a sequence of bytes-like objects");
    if (fast == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast), held = 0;
    Py_buffer *bodies = PyMem_Calloc(count ? (size_t)count : 1, sizeof(Py_buffer));
    Spec *spec = calloc(1, sizeof(Spec));
    Buf ids = {0};
    PyObject *out = NULL;
    int sorted = 1, r = 0;
    uint64_t next_key = 0;
    if (bodies == NULL || spec == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; held < count; held++)
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(fast, held), &bodies[held], PyBUF_SIMPLE) < 0) goto done;
    if (load_spec(spec_seq, spec) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count && r == 0; i++) {
        Cur c = {(const unsigned char *)bodies[i].buf, (const unsigned char *)bodies[i].buf + bodies[i].len};
        size_t first = ids.len / 8;
        r = parse_body(&c, spec, mode, &ids);
        if (r == 0) r = order_keys(&ids, first, &next_key);
    }
    if (r == 0) sorted = keys_rise(&ids);
    Py_END_ALLOW_THREADS
    if (r == NOMEM) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (r < 0) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    PyObject *columns = columns_of(spec);
    if (columns == NULL) goto done;
    PyObject *id_bytes = mode == MODE_RESULT ? (Py_INCREF(Py_None), Py_None) : bytes_of(&ids);
    if (id_bytes == NULL) {
        Py_DECREF(columns);
        goto done;
    }
    out = Py_BuildValue("(LNON)", (long long)rows_of(spec), id_bytes, sorted ? Py_True : Py_False, columns);
done:
    for (Py_ssize_t i = 0; i < held; i++) PyBuffer_Release(&bodies[i]);
    PyMem_Free(bodies);
    if (spec != NULL) free_spec(spec);
    free(spec);
    free(ids.data);
    Py_DECREF(fast);
    return out;
}

/* JSON whitespace as Python's bytes regex \s sees it. */
static int is_space(unsigned char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

/* Whether `"result"\s*:\s*null` occurs in [p, end): each "null" is checked backwards for the key before it. */
static int has_null_result(const unsigned char *p, const unsigned char *end) {
    static const char KEY[] = "\"result\"";
    const size_t key_len = sizeof(KEY) - 1;
    const unsigned char *start = p;
    while (end - p >= 4) {
        const unsigned char *hit = find_pair(p, end, 'n', 'u', 'u');
        if (hit == NULL) return 0;
        if (end - hit < 4 || memcmp(hit, "null", 4) != 0) {
            p = hit + 1;
            continue;
        }
        const unsigned char *q = hit;
        while (q > start && is_space(q[-1])) q--;
        if (q > start && q[-1] == ':') {
            q--;
            while (q > start && is_space(q[-1])) q--;
            if ((size_t)(q - start) >= key_len && memcmp(q - key_len, KEY, key_len) == 0) return 1;
        }
        p = hit + 4;
    }
    return 0;
}

static PyObject *null_result(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    int found;
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    found = has_null_result((const unsigned char *)body.buf, (const unsigned char *)body.buf + body.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    return PyBool_FromLong(found);
}

/* The end of a match at p (which starts with a key's quote) of `"blockNumber"\s*:\s*"(0x[0-9a-fA-F]{1,16})"` (key 0)
   or of `"blockTimestamp"\s*:\s*[^\sn]` (key 1), or NULL where there is none. */
static const unsigned char *key_match(const unsigned char *p, const unsigned char *end, int key) {
    static const char NUMBER[] = "\"blockNumber\"", STAMP[] = "\"blockTimestamp\"";
    const char *name = key ? STAMP : NUMBER;
    const size_t n = key ? sizeof STAMP - 1 : sizeof NUMBER - 1;
    if ((size_t)(end - p) < n || memcmp(p, name, n) != 0) return NULL;
    const unsigned char *q = p + n;
    while (q < end && is_space(*q)) q++;
    if (q == end || *q != ':') return NULL;
    q++;
    while (q < end && is_space(*q)) q++;
    if (key) return q < end && *q != 'n' ? q + 1 : NULL; /* not a space either: those were all taken above */
    if (end - q < 4 || q[0] != '"' || q[1] != '0' || q[2] != 'x') return NULL;
    const unsigned char *d = q + 3;
    while (d < end && d - (q + 3) <= 16 && HEX[*d] >= 0) d++;
    return d - (q + 3) >= 1 && d - (q + 3) <= 16 && d < end && *d == '"' ? d + 1 : NULL;
}

/* How many matches of each pattern above [p, end) holds, found as Python's re.findall finds them: left to right, each
   pattern's search resumed after its last match. Both begin with `"b`, so one pass over those places serves both:
   each place is tried for the pattern it may begin, unless inside that pattern's last match. */
static void count_keys(const unsigned char *p, const unsigned char *end, Py_ssize_t found[2]) {
    const unsigned char *resume[2] = {p, p};
    while ((p = find_pair(p, end, '"', 'b', 'b')) != NULL) {
        int key = end - p > 7 && p[6] == 'T'; /* "blockT...: a stamp's key, or neither */
        const unsigned char *m = p >= resume[key] ? key_match(p, end, key) : NULL;
        if (m != NULL) {
            found[key]++;
            resume[key] = m;
        }
        p++;
    }
}

static PyObject *block_stamps(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    Py_ssize_t found[2] = {0, 0};
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    count_keys((const unsigned char *)body.buf, (const unsigned char *)body.buf + body.len, found);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    return Py_BuildValue("(nn)", found[0], found[0] ? found[1] : 0);
}

/* The members of the JSON object (or the items of the list) at [start, end) of a document: [(key, start, end)] of each
   member's value ([(start, end)] of each item), every byte checked as JSON as skip_value() checks it; None where the
   text there is not one JSON object or list, or a key holds an escape. A trace_block document (route, block numbers,
   figures and the batch answers as received) is read so: its small members by json, its answers by scan(). */
static PyObject *members(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer doc;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &doc, &start, &end)) return NULL;
    if (start < 0 || end > doc.len || start > end) {
        PyBuffer_Release(&doc);
        PyErr_SetString(PyExc_ValueError, "start and end must lie within the document");
        return NULL;
    }
    const unsigned char *base = (const unsigned char *)doc.buf;
    Cur c = {base + start, base + end};
    Buf spans = {0}; /* (key start, key length, value start, value end) as int64s; key length -1: a list's item */
    int r = 0, object = 0;
    Py_BEGIN_ALLOW_THREADS
    ws(&c);
    if (c.p < c.end && (*c.p == '{' || *c.p == '[')) {
        object = *c.p == '{';
        c.p++;
        if (!eat(&c, object ? '}' : ']')) {
            for (;;) {
                int64_t span[4] = {0, -1, 0, 0};
                if (object) {
                    const unsigned char *k;
                    size_t kn;
                    if (string_raw(&c, &k, &kn, 0) < 0 || !valid_key(k, kn, c.end) || !eat(&c, ':')) {
                        r = FALLBACK;
                        break;
                    }
                    span[0] = k - base;
                    span[1] = (int64_t)kn;
                }
                ws(&c);
                span[2] = c.p - base;
                if (skip_value(&c, 1) < 0) {
                    r = FALLBACK;
                    break;
                }
                span[3] = c.p - base;
                if ((r = reserve(&spans, sizeof span)) < 0) break;
                memcpy(spans.data + spans.len, span, sizeof span);
                spans.len += sizeof span;
                if (eat(&c, ',')) continue;
                if (!eat(&c, object ? '}' : ']')) r = FALLBACK;
                break;
            }
        }
        ws(&c);
        if (r == 0 && c.p != c.end) r = FALLBACK;
    } else {
        r = FALLBACK;
    }
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (r == NOMEM) {
        PyErr_NoMemory();
    } else if (r < 0) {
        out = Py_None;
        Py_INCREF(out);
    } else if ((out = PyList_New((Py_ssize_t)(spans.len / sizeof(int64_t[4])))) != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(out); i++) {
            int64_t span[4];
            memcpy(span, spans.data + (size_t)i * sizeof span, sizeof span);
            PyObject *item = object ? Py_BuildValue("(y#LL)", (const char *)base + span[0], (Py_ssize_t)span[1],
                                                    (long long)span[2], (long long)span[3])
                                    : Py_BuildValue("(LL)", (long long)span[2], (long long)span[3]);
            if (item == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, item);
        }
    }
    free(spans.data);
    PyBuffer_Release(&doc);
    return out;
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(bodies, spec, mode) -> (rows, ids or None, ids_sorted, columns) of all the answers, or None (take the "
     "pure path)"},
    {"members", members, METH_VARARGS,
     "members(document, start, end) -> [(key, start, end)] of the object's members ([(start, end)] of the list's "
     "items) at [start, end), or None where it is not one JSON object or list"},
    {"block_stamps", block_stamps, METH_VARARGS,
     "block_stamps(body) -> (named, stamped): the matches of chainframe.datasets._logs's _BLOCK_NUMBER and _STAMPED in "
     "body (stamped is 0 where none is named), counted without holding the GIL"},
    {"null_result", null_result, METH_VARARGS,
     "null_result(body) -> whether '\"result\"\\s*:\\s*null' occurs in body (the GIL released while it looks)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native_rows", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native_rows(void) {
    init_hex();
    if (PyType_Ready(&OwnedType) < 0) return NULL;
    return PyModule_Create(&MODULE);
}

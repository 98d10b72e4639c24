/* A batch answer's envelopes, counted without holding the GIL.

   Before the client hands a batch answer on unparsed (AsyncClient._batch_body), it checks that the answer is plainly
   complete and error-free: one "jsonrpc" member per call and no "error" member anywhere. Python's bytes.count and
   `in` made that two scans holding the GIL, on the event loop's thread: a quarter of a local receipts run's CPU
   samples (perf, benchmarks/compare.py's chain). Here both searches are one pass, the GIL released, over the places
   where a quote is followed by 'e' or 'j' (_find_pair.h), and it stops at an "error". Optional, like the scanner:
   without it the Python scans run.

   split cuts a batch answer into its envelopes: where each one's object text starts and ends, and its id. The engine
   shares one answer per call between the datasets of a run that verifies, so each dataset must find its call's
   envelope without the results being parsed in Python (json.loads made every result a dict tree, then threw it away).
   It validates JSON as Python's json module does (strict strings, no NaN or Infinity; bytes past 0x7f are not checked
   as UTF-8), since a span it vouches for is handed on unparsed. Strings are skipped 16 bytes at a time by the string
   scanner _native_rows uses too (_json_string.h), without its UTF-8 check: 1.5-1.8 GB/s on a 105 MB batch of
   recorded results (scripts/bench split, gcc 12, this machine; 1.1-1.3 GB/s with the 8-byte skip it replaced),
   json.loads 0.2 GB/s. */

#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_find_pair.h"
#include "../_json_string.h"

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    Py_ssize_t members = 0;
    int error = 0;
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *p = (const unsigned char *)body.buf, *end = p + body.len, *next_member = p;
    while ((p = find_pair(p, end, '"', 'e', 'j')) != NULL) {
        if ((size_t)(end - p) >= 7 && memcmp(p, "\"error\"", 7) == 0) {
            error = 1;
            members = 0;
            break;
        }
        if (p >= next_member && (size_t)(end - p) >= 9 && memcmp(p, "\"jsonrpc\"", 9) == 0) {
            members++;  /* counted without overlaps, as bytes.count does */
            next_member = p + 9;
        }
        p++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    return Py_BuildValue("(nO)", members, error ? Py_True : Py_False);
}

/* ---- split ---- */

typedef struct {
    Py_ssize_t start, end; /* the envelope's object text, '{' to its '}' inclusive-exclusive */
    Py_ssize_t id_at, id_len; /* its id's digits; id_at < 0 while none was seen */
} Envelope;

typedef struct {
    Envelope *envelopes;
    Py_ssize_t count, capacity;
    unsigned char *stack; /* what each open bracket is: '[' or '{' */
    Py_ssize_t stack_capacity;
    int no_memory;
} Cutting;

static unsigned hex_value(unsigned char c) { return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10); }

/* p just after a string's opening quote: its closing quote, or NULL if it is unterminated or invalid as json takes
   it (bytes past 0x7f are not checked as UTF-8: see _json_string.h). */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end) {
    return json_string_end(p, end, 0);
}

/* Whether a valid key's text (between its quotes) means "id", escapes decoded as json does ("\u0069d" is "id"). */
static int means_id(const unsigned char *p, const unsigned char *end) {
    static const char ID[2] = {'i', 'd'};
    int n = 0;
    while (p < end) {
        unsigned unit = *p++;
        if (unit == '\\') {
            if (*p++ != 'u') return 0; /* the other escapes stand for neither letter */
            unit = hex_value(p[0]) << 12 | hex_value(p[1]) << 8 | hex_value(p[2]) << 4 | hex_value(p[3]);
            p += 4;
        }
        if (n == 2 || unit != (unsigned char)ID[n]) return 0;
        n++;
    }
    return n == 2;
}

static int push(Cutting *c, Py_ssize_t depth, unsigned char bracket) {
    if (depth == c->stack_capacity) {
        Py_ssize_t capacity = c->stack_capacity * 2;
        unsigned char *grown = PyMem_RawRealloc(c->stack, (size_t)capacity);
        if (grown == NULL) return c->no_memory = 1, 0;
        c->stack = grown;
        c->stack_capacity = capacity;
    }
    c->stack[depth] = bracket;
    return 1;
}

static Envelope *open_envelope(Cutting *c, Py_ssize_t start) {
    if (c->count == c->capacity) {
        Py_ssize_t capacity = c->capacity ? c->capacity * 2 : 64;
        Envelope *grown = PyMem_RawRealloc(c->envelopes, (size_t)capacity * sizeof(Envelope));
        if (grown == NULL) return c->no_memory = 1, NULL;
        c->envelopes = grown;
        c->capacity = capacity;
    }
    Envelope *e = &c->envelopes[c->count++];
    e->start = start;
    e->end = -1;
    e->id_at = -1;
    e->id_len = 0;
    return e;
}

#define DIGIT(c) ((unsigned char)((c) - '0') <= 9)
#define SKIP_SPACE() \
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++

/* One pass over the whole answer, without the GIL: 1 when it is a batch of envelopes (c->envelopes filled), else 0.
   Depth 1 is the batch's array, depth 2 an envelope, whose keys alone are looked at. */
static int cut(const unsigned char *buf, Py_ssize_t len, Cutting *c) {
    const unsigned char *p = buf, *end = buf + len, *q;
    Py_ssize_t depth = 0;
    int want_id = 0; /* the next value is an envelope's id */
    Envelope *envelope = NULL;

    SKIP_SPACE();
    if (p == end || *p != '[') return 0;
    p++;
    if (!push(c, depth++, '[')) return 0;
    SKIP_SPACE();
    if (p < end && *p == ']') {
        p++;
        goto done;
    }
value:
    SKIP_SPACE();
    if (p == end) return 0;
    if (depth == 1) {
        if (*p != '{') return 0;
        if ((envelope = open_envelope(c, p - buf)) == NULL) return 0;
    }
    if (want_id && *p != '-' && !DIGIT(*p)) return 0;
    switch (*p) {
    case '{':
        if (!push(c, depth++, '{')) return 0;
        p++;
        SKIP_SPACE();
        if (p < end && *p == '}') {
            p++;
            goto closed;
        }
        goto key;
    case '[':
        if (!push(c, depth++, '[')) return 0;
        p++;
        SKIP_SPACE();
        if (p < end && *p == ']') {
            p++;
            goto closed;
        }
        goto value;
    case '"':
        if ((q = string_end(p + 1, end)) == NULL) return 0;
        p = q + 1;
        goto after;
    case 't':
        if (end - p < 4 || memcmp(p, "true", 4) != 0) return 0;
        p += 4;
        goto after;
    case 'f':
        if (end - p < 5 || memcmp(p, "false", 5) != 0) return 0;
        p += 5;
        goto after;
    case 'n':
        if (end - p < 4 || memcmp(p, "null", 4) != 0) return 0;
        p += 4;
        goto after;
    default: {
        const unsigned char *number = p;
        int integral = 1;
        if (*p == '-') p++;
        if (p == end) return 0;
        if (*p == '0')
            p++;
        else if (DIGIT(*p))
            while (p < end && DIGIT(*p)) p++;
        else
            return 0;
        if (p < end && *p == '.') {
            integral = 0;
            if (++p == end || !DIGIT(*p)) return 0;
            while (p < end && DIGIT(*p)) p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            integral = 0;
            if (++p < end && (*p == '+' || *p == '-')) p++;
            if (p == end || !DIGIT(*p)) return 0;
            while (p < end && DIGIT(*p)) p++;
        }
        if (want_id) {
            /* json reads -0 as the int 0; every other negative or fractional id is refused */
            if (!integral || (*number == '-' && (p - number != 2 || number[1] != '0'))) return 0;
            if (*number == '-') number++;
            envelope->id_at = number - buf;
            envelope->id_len = p - number;
            want_id = 0;
        }
        goto after;
    }
    }
closed: /* p is past a bracket that closed the innermost open one */
    depth--;
    if (depth == 1) {
        if (envelope->id_at < 0) return 0;
        envelope->end = p - buf;
    }
    if (depth == 0) goto done;
after:
    SKIP_SPACE();
    if (p == end) return 0;
    if (c->stack[depth - 1] == '{') {
        if (*p == '}') {
            p++;
            goto closed;
        }
        if (*p != ',') return 0;
        p++;
        SKIP_SPACE();
        goto key;
    }
    if (*p == ']') {
        p++;
        goto closed;
    }
    if (*p != ',') return 0;
    p++;
    goto value;
key:
    if (p == end || *p != '"') return 0;
    if ((q = string_end(p + 1, end)) == NULL) return 0;
    if (depth == 2 && means_id(p + 1, q)) {
        if (envelope->id_at >= 0) return 0; /* two ids: which call it answers is unclear */
        want_id = 1;
    }
    p = q + 1;
    SKIP_SPACE();
    if (p == end || *p != ':') return 0;
    p++;
    goto value;
done:
    SKIP_SPACE();
    return p == end;
}

static PyObject *id_object(const char *digits, Py_ssize_t length) {
    if (length <= 18) {
        unsigned long long value = 0;
        for (Py_ssize_t i = 0; i < length; i++) value = value * 10 + (unsigned long long)(digits[i] - '0');
        return PyLong_FromUnsignedLongLong(value);
    }
    char *text = PyMem_Malloc((size_t)length + 1);
    if (text == NULL) return PyErr_NoMemory();
    memcpy(text, digits, (size_t)length);
    text[length] = '\0';
    PyObject *id = PyLong_FromString(text, NULL, 10);
    PyMem_Free(text);
    return id;
}

static PyObject *split(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Cutting c = {NULL, 0, 0, NULL, 64, 0};
    int whole = 0;
    c.stack = PyMem_RawMalloc((size_t)c.stack_capacity);
    if (c.stack == NULL) c.no_memory = 1;
    Py_BEGIN_ALLOW_THREADS
    if (!c.no_memory) whole = cut((const unsigned char *)body.buf, body.len, &c);
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (c.no_memory) {
        PyErr_NoMemory();
    } else if (!whole) {
        out = Py_NewRef(Py_None);
    } else if ((out = PyList_New(c.count)) != NULL) {
        for (Py_ssize_t i = 0; i < c.count; i++) {
            const Envelope *e = &c.envelopes[i];
            PyObject *id = id_object((const char *)body.buf + e->id_at, e->id_len);
            if (id == NULL) {
                Py_CLEAR(out);
                if (PyErr_ExceptionMatches(PyExc_ValueError)) { /* past int's digit limit, as json refuses it */
                    PyErr_Clear();
                    out = Py_NewRef(Py_None);
                }
                break;
            }
            PyObject *item = Py_BuildValue("(Nnn)", id, e->start, e->end);
            if (item == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, item);
        }
    }
    PyMem_RawFree(c.stack);
    PyMem_RawFree(c.envelopes);
    PyBuffer_Release(&body);
    return out;
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(body) -> (occurrences of '\"jsonrpc\"', whether '\"error\"' occurs); the count is 0 when it does"},
    {"split", split, METH_VARARGS,
     "split(body) -> [(id, start, end), ...] for a JSON array of objects each with one non-negative integer \"id\" "
     "member, body[start:end] being each object's text; None for any other body"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_envelopes", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__envelopes(void) { return PyModule_Create(&MODULE); }

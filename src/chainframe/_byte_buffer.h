/* A growable byte buffer: the one the compiled readers and the verification code both write into.

   Shared by chainframe.datasets._native_rows (Arrow buffers built from answers' bytes, without the GIL) and
   chainframe.verify._native (RLP encodings and trie nodes), which each include it. Growth doubles from 256 bytes;
   a failed allocation leaves the buffer as it was and returns -1 (no Python call: callers may hold no GIL). */

#ifndef CHAINFRAME_BYTE_BUFFER_H
#define CHAINFRAME_BYTE_BUFFER_H

#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *data;
    size_t len, cap;
} Buf;

/* Room for ``more`` bytes after ``len``: 0, or -1 when memory ran out. */
static inline int buf_reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) cap *= 2;
    unsigned char *data = realloc(b->data, cap);
    if (data == NULL) return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

/* ``n`` bytes from ``p`` appended: 0, or -1 when memory ran out. */
static inline int buf_put(Buf *b, const unsigned char *p, size_t n) {
    if (buf_reserve(b, n)) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

#endif

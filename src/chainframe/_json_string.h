/* The end of a JSON string: the one string scanner of the compiled readers.

   chainframe.rpc._envelopes checks strings as Python's json module does on text decoded as latin-1 (the bytes past
   0x7f are not checked as UTF-8; any \u escape) and vouches for the spans it cuts; chainframe.datasets._native_rows
   takes a string only as JSON allows it on UTF-8 (RFC 3629, no surrogate escape: those are left to the pure path).
   The one difference is ``utf8``, a constant at each call, so the compiler builds each caller its own loop. Bytes a
   string holds as they are (hex digits, most of an answer) are skipped 16 at a time. Shared by
   chainframe.rpc._envelopes and chainframe.datasets._native_rows, which each include it. */

#ifndef CHAINFRAME_JSON_STRING_H
#define CHAINFRAME_JSON_STRING_H

#include <stddef.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first byte from p that is a quote, a backslash, a control character (or, with ``utf8``, not ASCII), or end.
   SSE2 (every x86-64) looks at 16 bytes at once: compared as signed bytes, those from 0x80 are negative, so one
   comparison with 0x20 finds both control characters and the start of a multi-byte character; without ``utf8`` the
   unsigned minimum with 0x1f finds the control characters alone. */
static inline const unsigned char *json_plain_run(const unsigned char *p, const unsigned char *end, int utf8) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20), below_space = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i control = utf8 ? _mm_cmplt_epi8(v, space) : _mm_cmpeq_epi8(_mm_min_epu8(v, below_space), v);
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), control);
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && (!utf8 || *p < 0x80)) p++;
    return p;
}

/* The length of the UTF-8 character at p (RFC 3629: no overlong form, no surrogate, at most U+10FFFF), or 0. */
static inline int json_utf8_length(const unsigned char *p, const unsigned char *end) {
    unsigned char b = p[0];
    int n;
    unsigned char low = 0x80, high = 0xBF; /* the second byte's range */
    if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0) low = 0xA0;
        if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0) low = 0x90;
        if (b == 0xF4) high = 0x8F;
    } else return 0;
    if (end - p < n || p[1] < low || p[1] > high) return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

static inline int json_hex_digit(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* p just after a string's opening quote: its closing quote, or NULL if it is not closed or not one JSON takes (a raw
   control character, an escape JSON does not know; with ``utf8``, a byte sequence that is not UTF-8 or a \u escape
   of a surrogate). */
static inline const unsigned char *json_string_end(const unsigned char *p, const unsigned char *end, int utf8) {
    for (;;) {
        p = json_plain_run(p, end, utf8);
        if (p >= end) return NULL;
        unsigned char ch = *p;
        if (ch == '"') return p;
        if (ch == '\\') {
            if (end - p < 2) return NULL;
            unsigned char e = p[1];
            if (e == 'u') {
                if (end - p < 6) return NULL;
                int v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = json_hex_digit(p[i]);
                    if (h < 0) return NULL;
                    v = v << 4 | h;
                }
                if (utf8 && v >= 0xD800 && v <= 0xDFFF) return NULL;
                p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (ch < 0x20) {
            return NULL;
        } else if (!utf8) {
            p++; /* a byte past 0x7f, taken as json takes it from latin-1 text (json_plain_run stops at none) */
        } else {
            int n = json_utf8_length(p, end);
            if (n == 0) return NULL;
            p += n;
        }
    }
}

#endif

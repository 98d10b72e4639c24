/* Where two bytes stand side by side in a buffer: the fast first step of the compiled answer checks.

   The checks look for rare strings in whole answers ("null" after "result", "error", "jsonrpc"). glibc's memmem
   restarts for every hit and found "null" at 2.5 GB/s in a 5 MB eth_getLogs answer; this loop, 64 bytes at a time
   with no branch inside, is vectorized by the compiler at -O2 and ran at 12-21 GB/s on the same answers (gcc 12,
   this machine). Shared by chainframe.rpc._envelopes and chainframe.datasets._native_rows, which each include it. */

#ifndef CHAINFRAME_FIND_PAIR_H
#define CHAINFRAME_FIND_PAIR_H

#include <stddef.h>

/* The first p in [start, end - 1) with p[0] == a and (p[1] == b or p[1] == c), or NULL. */
static inline const unsigned char *find_pair(const unsigned char *p, const unsigned char *end, unsigned char a,
                                             unsigned char b, unsigned char c) {
    while (end - p > 64) {
        unsigned char hit = 0;
        for (int i = 0; i < 64; i++) hit |= (unsigned char)((p[i] == a) & ((p[i + 1] == b) | (p[i + 1] == c)));
        if (hit) break;
        p += 64;
    }
    for (; end - p >= 2; p++)
        if (p[0] == a && (p[1] == b || p[1] == c)) return p;
    return NULL;
}

#endif

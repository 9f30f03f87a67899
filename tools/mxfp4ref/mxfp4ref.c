// mxfp4ref prints ggml's own MXFP4 dequantization and quantization of
// generated inputs as JSON, the reference engine/quant's MXFP4 tests read
// (testdata/mxfp4_ggml.json). Built by gen.sh against llama.cpp's
// ggml-quants.c; see the README there.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ggml-common.h"
#include "ggml-quants.h"

// xorshift64*: a fixed generator, so the inputs are the same everywhere.
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}
static float uniform(void) { return (float)((next() >> 40) / 16777216.0) * 2.0f - 1.0f; }

static void hex(const uint8_t *b, int n) {
    putchar('"');
    for (int i = 0; i < n; i++) printf("%02x", b[i]);
    putchar('"');
}

static void bits(const float *x, int n) {
    putchar('[');
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        printf("%s%u", i ? "," : "", u);
    }
    putchar(']');
}

int main(void) {
    block_mxfp4 b;
    float y[QK_MXFP4];
    printf("{\"dequantize\":[\n");
    // Every scale byte, each with every nibble in both halves and the
    // rest random.
    for (int e = 0; e < 256; e++) {
        b.e = (uint8_t)e;
        for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)(j | ((15 - j) << 4));
        if (e % 2) for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)next();
        dequantize_row_mxfp4(&b, y, QK_MXFP4);
        printf("%s{\"block\":", e ? ",\n" : "");
        hex((const uint8_t *)&b, sizeof b);
        printf(",\"values\":");
        bits(y, QK_MXFP4);
        putchar('}');
    }
    printf("\n],\"quantize\":[\n");
    float x[QK_MXFP4];
    int cases = 0;
    for (int c = 0; c < 400; c++) {
        // Magnitudes from 2^-120 to 2^120, ties and exact codebook points
        // at some scales, powers of two and their neighbours as maxima.
        int p = (int)(next() % 241) - 120;
        float s = ldexpf(1.0f, p);
        for (int j = 0; j < QK_MXFP4; j++) {
            float v = uniform() * s;
            switch (c % 5) {
            case 1: v = (float)((int)(next() % 25) - 12) * 0.25f * s; break;  // on and between codebook points
            case 2: if (j % 7 == 0) v = 0.0f; break;
            }
            x[j] = v;
        }
        if (c % 5 == 3) x[next() % QK_MXFP4] = s;
        if (c % 5 == 4) x[next() % QK_MXFP4] = nextafterf(s, 0.0f);
        if (c == 0) memset(x, 0, sizeof x);
        quantize_row_mxfp4_ref(x, &b, QK_MXFP4);
        printf("%s{\"x\":", cases++ ? ",\n" : "");
        bits(x, QK_MXFP4);
        printf(",\"block\":");
        hex((const uint8_t *)&b, sizeof b);
        putchar('}');
    }
    printf("\n]}\n");
    return 0;
}

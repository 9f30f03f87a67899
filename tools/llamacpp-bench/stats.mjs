// meanStd is the mean and the sample standard deviation of v, as
// llama-bench reports them ([0, 0] for no values, a deviation of 0 for
// one): one definition for bench.mjs and llamabench.mjs.
export function meanStd(v) {
    if (v.length === 0) return [0, 0];
    const m = v.reduce((a, b) => a + b, 0) / v.length;
    if (v.length === 1) return [m, 0];
    const ss = v.reduce((a, b) => a + (b - m) * (b - m), 0);
    return [m, Math.sqrt(ss / (v.length - 1))];
}

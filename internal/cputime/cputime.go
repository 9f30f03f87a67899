// Package cputime reads the CPU time a process or a thread has used,
// for benchmarks on a shared machine, where wall time also counts the
// waits for a core: tools/scale's figures and the chat view's scale
// tests. Where the system does not tell, the functions return 0.
package cputime

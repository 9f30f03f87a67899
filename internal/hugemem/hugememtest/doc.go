// Package hugememtest holds what the tests of memory that goes back to
// its file share (hugemem's Refile, the CPU backend's page release): a
// file of known bytes, a mapping of it, and what /proc/self/smaps says
// of the mapping that holds an address. Only tests import it; all but
// this comment is Linux's.
package hugememtest

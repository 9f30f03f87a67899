// Package download fetches large files over HTTP the way a person wants a
// multi-gigabyte model fetched: several Range connections at once, stalls
// detected and retried with backoff, Retry-After honoured, progress kept
// across pauses, crashes and restarts, the free disk space checked first,
// the SHA-256 verified when known, and the file renamed into place only
// when it is whole and right.
//
// Partial data lives in DEST.part beside a small JSON state file
// (DEST.part.json) recording which byte ranges are on disk; the state is
// written only after the data it describes has been synced, so a crash
// never makes it claim bytes that are not there. Nothing ever appears
// under DEST until the download is complete and verified.
//
// A download is a handle, in the manner of grab:
//
//	d := download.Start(ctx, download.Request{URL: u, Dest: path, SHA256: sum}, download.Options{})
//	for !d.IsDone() {
//		fmt.Printf("%d/%d bytes, %.0f B/s, ETA %s\n", d.BytesComplete(), d.Size(), d.Rate(), d.ETA())
//		time.Sleep(time.Second)
//	}
//	if err := d.Err(); err != nil { ... }
//
// A Manager runs a persisted queue of downloads, a few at a time.
//
// Only the standard library is used.
package download

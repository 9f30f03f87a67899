// Package cmalloc gives the C heap's free pages back to the system when
// the window stops needing them.
//
// Why: in a real window the text Fyne paints lives in OpenGL textures,
// and under a software driver (Mesa's llvmpipe, as under Xvfb or on a
// machine without a GPU driver) a texture is memory the C allocator
// (glibc's malloc) hands out. Scrolling a 2,000-message chat paints
// thousands of distinct lines; Fyne frees each line's texture a cache
// lifetime after it was last painted (internal/fynecache), but glibc keeps
// the freed memory in its heap, resident, for the next malloc: measured
// under Xvfb (issue 25, docs/performance.md), the main arena held about
// 100 MB in use during the scroll, and what those textures had used stayed
// resident after they were freed. malloc_trim(0) hands the free pages
// back (madvise), wherever they lie in the heap.
//
// Trimming is periodic, not tied to Go's collections: the textures are
// freed by Fyne's painter on its frames, whatever the Go heap does, and a
// trim is cheap when there is little to give back. The app has cgo already
// (Fyne's GLFW driver); this package builds without it too, where it does
// nothing (no cgo, or not glibc's Linux).
package cmalloc

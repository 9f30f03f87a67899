// Package metal runs models on Apple GPUs through Metal, loaded at run
// time with purego's Objective-C runtime: no cgo, nothing to install.
// Importing it registers the "metal" backend (engine/backend.Register);
// the app imports it, the engine never does.
//
// The package is in two layers. The device (Device) is portable Go: it
// plans buffers in shared (unified) memory, rounds activations, stages
// host arguments, encodes every operation of a forward pass as a dispatch
// of one of Churon's own kernels (kernels.metal, embedded and compiled by
// Metal when the backend starts), waits at Sync and falls back — the
// engine moves the model to the CPU — when a command buffer fails. Under
// it a runner does the few things that need Metal itself: shared buffers,
// pipelines, dispatches, commit and wait. The darwin runner
// (metal_darwin.go) is the only code that talks to Metal.framework;
// elsewhere New says Metal is not available on this system.
//
// The kernels compute what the CPU backend computes (see kernels.metal
// for where they are equal bit for bit and where only within rounding).
// On machines without a Mac the tests compile the same MSL source as
// C++ against a small header standing in for Metal's (emu/msl.h), run it
// under an emulated runner (emu/fakemetal.cpp) and pin every kernel, and
// whole generations, to the CPU backend; tools/gpucheck runs the same
// tests on a Mac (packaging/macos/README.md).
package metal

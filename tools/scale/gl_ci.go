//go:build ci

package main

const realWindow = false

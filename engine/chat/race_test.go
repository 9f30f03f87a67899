//go:build race

package chat

import "time"

func init() { quick = 30 * time.Second }

package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/churon/churon/internal/cputime"
	"github.com/churon/churon/internal/synthchat"
)

// synthLibrary is n conversations of m synthetic messages (tools/scale's
// kind: English and Korean, 20–300 words, some code and tables).
func synthLibrary(n, m int) []ImportConversation {
	r := rand.New(rand.NewPCG(1, 0x5ca1e))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]ImportConversation, n)
	for i := range out {
		created := start.Add(time.Duration(i) * 37 * time.Minute)
		c := ImportConversation{Conversation: Conversation{Title: fmt.Sprintf("Chat %d: %s", i+1, synthchat.Words(r, 4, i%3 == 0)), Created: created}}
		at := created
		for j := range m {
			role := RoleUser
			if j%2 == 1 {
				role = RoleAssistant
			}
			at = at.Add(time.Duration(5+r.IntN(120)) * time.Second)
			c.Messages = append(c.Messages, Message{Role: role, Content: synthchat.Message(r), Created: at, Updated: at})
		}
		c.Conversation.Updated = at
		out[i] = c
	}
	return out
}

// BenchmarkImport imports a library of 1,000 synthetic conversations of
// 12 messages into a new database: the store's share of an import
// (reported also as CPU time per conversation).
//
//	go test ./app/store -run '^$' -bench Import -benchtime 3x -cpu 1
func BenchmarkImport(b *testing.B) {
	lib := synthLibrary(1000, 12)
	ctx := context.Background()
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		s, err := Open(ctx, filepath.Join(b.TempDir(), strconv.Itoa(i)+".db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c := cputime.Process()
		if _, err := s.Import(ctx, lib); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Process() - c
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-µs/conv")
}

package chat

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRender renders Qwen3's template (a real one with loops, string
// methods and namespaces) over a 200-message conversation.
func BenchmarkRender(b *testing.B) {
	g, ok := loadGoldens(b)["qwen3"]
	if !ok {
		b.Fatal("no qwen3 golden")
	}
	tmpl, err := Parse(g.Template)
	if err != nil {
		b.Fatal(err)
	}
	var msgs []Message
	msgs = append(msgs, Message{Role: "system", Content: "You are a helpful assistant."})
	for i := range 100 {
		msgs = append(msgs,
			Message{Role: "user", Content: fmt.Sprintf("질문 %d: 서울의 날씨는 어떤가요?", i)},
			Message{Role: "assistant", Content: fmt.Sprintf("<think>\n생각 %d\n</think>\n\n답변 %d: 맑습니다.", i, i)})
	}
	msgs = append(msgs, Message{Role: "user", Content: "마지막 질문"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(context.Background(), msgs, Options{AddGenerationPrompt: true}); err != nil {
			b.Fatal(err)
		}
	}
}

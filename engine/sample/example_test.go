package sample_test

import (
	"fmt"

	"github.com/churon/churon/engine/sample"
)

func ExampleSampler() {
	p := sample.DefaultParams()
	p.Temperature = 0 // greedy, to make the output predictable
	s, err := sample.New(p, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	logits := []float32{1.0, 3.0, 2.9, -1}
	for range 3 {
		tok := s.Sample(logits)
		s.Accept(tok) // the repeat penalty now pushes token 1 down
		fmt.Println(tok)
	}
	// Output:
	// 1
	// 2
	// 1
}

func ExampleStopMatcher() {
	m := sample.NewStopMatcher([]string{"\nUser:"})
	for _, piece := range []string{"Hello!", "\n", "Us", "er:", " more"} {
		emit, stopped := m.Feed(piece)
		fmt.Printf("%q %v\n", emit, stopped)
		if stopped {
			break
		}
	}
	// Output:
	// "Hello!" false
	// "" false
	// "" false
	// "" true
}

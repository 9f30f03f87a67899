// Package openai is a client of the OpenAI-compatible API as the servers
// people run actually speak it — llama.cpp's llama-server, vLLM, Ollama's
// /v1 endpoint, LM Studio, another Churon (`churon serve`) or a cloud
// endpoint: the wire types Churon reads and writes (wire.go), a
// server-sent-events reader that tolerates their differences (sse.go),
// and errors that say, in one line, what happened and what to do
// (errors.go). It imports nothing of the engine; app/remote builds the
// remote engine on it.
//
//	c, err := openai.NewClient(openai.Config{BaseURL: "http://127.0.0.1:8080", APIKey: key})
//	models, err := c.Models(ctx)
//	st, err := c.ChatStream(ctx, openai.ChatRequest{Model: models[0].ID, Messages: msgs})
//	defer st.Close()
//	for {
//		ch, err := st.Next()
//		if err == io.EOF {
//			break // st.Usage(), st.FinishReason()
//		}
//		if err != nil {
//			return err // an *Error: errors.Is(err, openai.ErrStreamCut) …
//		}
//		fmt.Print(ch.Text())
//	}
//
// The API key is sent only in the Authorization header; it never appears
// in an error, and a server's error message that echoes it has it masked.
//
// A Client is safe for concurrent use; a Stream belongs to one goroutine
// (Close may be called from any).
package openai

package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/churon/churon/app/export"
)

// The words synthetic messages are made of. Search terms the benchmark
// looks for are among them, at known rates: "zebra" and "김치찌개" are
// rare (about one message in 200), "model" and "모델" common.
var (
	english = strings.Fields(`the a of and to in is that it for on with as was at by an be this are from or have not
		but what all were when we there can more if no out so said up its about into than them only other new some
		could time these two may then do first any my now such like our over man me even most made after also did
		many before must through back years where much your way well down should because each just those people how
		too little state good very make world still own see men work long get here between both life being under
		never day same another know while last might us great old year off come since against go came right used take
		three weather answer question model token memory cache layer window search import export library quick brown
		fox jumps lazy dog river mountain coffee train garden winter summer music paper letter number system value`)
	korean = strings.Fields(`그리고 하지만 그래서 오늘 내일 어제 날씨 모델 답변 질문 사람 시간 생각 문제 방법 이야기 공부 학교 회사
		음식 김치 불고기 비빔밥 커피 여행 서울 부산 바다 하늘 구름 바람 겨울 여름 음악 영화 친구 가족 마음 세상 도시
		기차 버스 지하철 도서관 컴퓨터 프로그램 데이터 메모리 검색 기록 대화 정리 설명 예시 결과 이유 정도 부분 경우
		있습니다 없습니다 합니다 했습니다 됩니다 좋습니다 같습니다 보입니다 필요합니다 중요합니다 가능합니다`)
)

// rareEvery: one message in rareEvery carries a rare term.
const rareEvery = 200

// words returns n words of one language, with a rare term now and then.
func words(r *rand.Rand, n int, ko bool) string {
	list := english
	if ko {
		list = korean
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if i%14 == 13 {
				b.WriteString(".\n\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(list[r.IntN(len(list))])
	}
	return b.String()
}

// messageText is a message of 20–300 words, English or Korean, sometimes
// with a code block or a table.
func messageText(r *rand.Rand) string {
	ko := r.IntN(3) == 0
	n := 20 + r.IntN(281)
	text := words(r, n, ko)
	switch r.IntN(rareEvery) {
	case 0:
		text += " zebra crossing."
	case 1:
		text += " 김치찌개를 먹었습니다."
	}
	switch r.IntN(10) {
	case 0:
		text += "\n\n```go\nfunc add(a, b int) int {\n\treturn a + b // sum\n}\n```\n"
	case 1:
		text += "\n\n| name | value | note |\n|---|---|---|\n| alpha | 1 | first |\n| beta | 2 | second |\n| 감마 | 3 | 셋째 |\n"
	}
	return text
}

// spec is the synthetic library: Convs conversations of Msgs messages,
// and one long chat of Long messages, the most recently updated.
type spec struct {
	Convs, Msgs, Long int
	Seed              uint64
}

// LongTitle is the long chat's title, by which the benchmark opens it.
const LongTitle = "A very long chat"

// writeZip writes the library as a zip of JSON exports, a thousand
// conversations each (one file would pass the import's size limit for the
// larger libraries), which Churon's own import reads.
func writeZip(w io.Writer, sp spec) error {
	r := rand.New(rand.NewPCG(sp.Seed, 0x5ca1e))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	zw := zip.NewWriter(w)
	var doc export.Document
	part := 0
	flush := func() error {
		if len(doc.Conversations) == 0 {
			return nil
		}
		part++
		f, err := zw.Create(fmt.Sprintf("chats-%03d.json", part))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return err
		}
		doc.Conversations = doc.Conversations[:0]
		return nil
	}
	doc = export.Document{Format: export.FormatID, Version: export.Version, Generator: "churon scale benchmark"}
	add := func(title string, created time.Time, n int) {
		c := export.Conversation{Title: title, Created: created, SystemPrompt: ""}
		t := created
		for j := range n {
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			t = t.Add(time.Duration(5+r.IntN(120)) * time.Second)
			c.Messages = append(c.Messages, export.Message{Role: role, Content: messageText(r), Created: t, Updated: t})
		}
		c.Updated = t
		doc.Conversations = append(doc.Conversations, c)
	}
	for i := range sp.Convs {
		title := fmt.Sprintf("Chat %d: %s", i+1, words(r, 3+r.IntN(4), r.IntN(3) == 0))
		add(title, start.Add(time.Duration(i)*37*time.Minute), sp.Msgs)
		// A few pinned, as people pin: they head the list.
		doc.Conversations[len(doc.Conversations)-1].Pinned = i%2000 == 1
		if len(doc.Conversations) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if sp.Long > 0 {
		add(LongTitle, start.Add(time.Duration(sp.Convs+1)*37*time.Minute), sp.Long)
	}
	if err := flush(); err != nil {
		return err
	}
	return zw.Close()
}

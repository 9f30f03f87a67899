// Package synthchat writes the synthetic messages that long chats and
// libraries are filled with where their scale is measured: tools/scale's
// library and the chat view's scale tests. The same generator, seeded the
// same, gives the same text.
package synthchat

import (
	"math/rand/v2"
	"strings"
)

// The words synthetic messages are made of. Search terms a benchmark
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

// RareEvery: one message in RareEvery carries a rare term.
const RareEvery = 200

// Words returns n words of one language, a paragraph break every 14.
func Words(r *rand.Rand, n int, ko bool) string {
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

// Message is a message of 20–300 words, English or Korean (one in
// three), sometimes with a code block or a table, now and then a rare term.
func Message(r *rand.Rand) string {
	ko := r.IntN(3) == 0
	n := 20 + r.IntN(281)
	text := Words(r, n, ko)
	switch r.IntN(RareEvery) {
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

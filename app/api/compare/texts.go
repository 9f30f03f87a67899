package compare

// BuiltinText is one text of the built-in set every model is scored on
// besides the answer: the same tokens for every model, written for this
// package (not taken from any corpus a model may have memorised), a few
// hundred tokens each with a byte-level BPE vocabulary such as Qwen's.
type BuiltinText struct {
	Name string // "en", "ko": also the segment name in Quality.Texts
	Lang string // BCP 47
	Text string
}

// Texts is the built-in text set: English and Korean prose with a short
// explanatory passage each, so that both narrative and factual wording
// are scored.
var Texts = []BuiltinText{
	{Name: "en", Lang: "en", Text: textEnglish},
	{Name: "ko", Lang: "ko", Text: textKorean},
}

const textEnglish = `The lighthouse keeper on Gull Island kept two logbooks. The first was the official one, bound in green cloth, where he wrote down the wind speed, the height of the waves and the ships that passed each night. The second was a small notebook with a soft cover, and in it he wrote everything else: the day a seal slept on the landing for six hours, the smell of rain before it arrived, the names he gave to the three crows that visited his window every morning.

When the lamp was finally automated in 1987, an engineer from the mainland came to install the new equipment. She was polite and quick, and she finished in two days. Before she left, she asked whether he would miss the work. He thought about it for a long time. Then he said that the light had never really been his job. His job had been to notice things, and nobody could automate that.

He stayed on the island for another eleven years. Every evening he still climbed the ninety-four steps to the lantern room, not because the machine needed him, but because the habit had become a kind of promise. The notebooks, all forty-one of them, are now kept in the small museum by the harbor. Visitors usually skip the official logs. They read the other ones, slowly, and many of them leave with the feeling that they have learned how to look at the sea.

Tides rise and fall because the Moon's gravity pulls on the oceans a little more strongly on the side of the Earth that faces it. The Sun adds its own, weaker pull, so the highest tides come when the two line up, at new moon and at full moon. Sailors knew the pattern for thousands of years before anyone could explain it.`

const textKorean = `할머니 댁의 김장은 해마다 11월 셋째 주 토요일에 열렸다. 전날 밤부터 마당에는 소금에 절인 배추가 산처럼 쌓였고, 부엌에서는 고춧가루와 마늘, 생강, 젓갈을 섞는 냄새가 새어 나왔다. 아침이 되면 이모들과 삼촌들이 차례로 도착했다. 누구는 고무장갑을 챙겨 오고, 누구는 커다란 대야를 들고 왔다.

일은 언제나 같은 순서로 진행되었다. 먼저 절인 배추를 물에 두세 번 헹궈 물기를 뺐다. 그다음 무채와 쪽파, 갓을 넣은 양념을 배춧잎 사이사이에 꼼꼼히 발랐다. 할머니는 양념이 너무 많으면 김치가 금방 시어진다고 하시며 손으로 직접 양을 가늠하셨다. 계량컵은 한 번도 쓰지 않으셨다.

점심에는 갓 버무린 김치와 함께 수육을 삶아 먹었다. 따뜻한 고기에 매콤한 속을 얹어 한입 먹으면 추위가 단번에 잊혔다. 오후가 되면 완성된 김치를 항아리와 통에 나누어 담았고, 각자 집으로 가져갈 몫을 챙겼다.

발효가 진행되면 유산균이 배추와 무의 당을 분해해 젖산을 만들고, 그래서 김치의 맛이 점점 새콤해진다. 온도가 낮을수록 발효는 천천히 진행되므로 김치냉장고는 보통 영하 1도 안팎으로 맞춰 둔다.

지금은 할머니가 계시지 않지만, 우리 가족은 여전히 같은 날에 모인다. 배추를 절이는 방법도, 양념의 비율도 예전 그대로다. 김장은 겨울을 준비하는 일이기도 하지만, 무엇보다 서로의 안부를 확인하는 날이 되었다.`

package session

// ModelInfo describes the loaded model: the session's own copy of what
// the engine reports, so that front ends never import the engine.
type ModelInfo struct {
	Path          string
	Name          string // general.name, or the file name
	Architecture  string
	Parameters    int64
	FileType      string         // e.g. "Q4_K_M"
	QuantMix      map[string]int // tensors per type
	ContextLength int            // trained context length
	Layers        int
	HasTemplate   bool // the file carries a chat template
	// Thinks says the model reasons before it answers in a way Churon
	// keeps apart (Token.Reasoning, Message.Reasoning): "think" for
	// <think> blocks (Qwen3, DeepSeek-R1), "harmony" for gpt-oss's
	// analysis channel, "" for none. ThinkingSwitch says its template
	// honours Settings.ThinkingOff (Qwen3's enable_thinking): a chat's
	// switch for it is worth showing.
	Thinks         string
	ThinkingSwitch bool
	FileBytes      int64
	WeightBytes    int64
	// Backend says what runs where ("CPU avx2 (8 threads)", or each
	// device with its share of the model); Threads are the CPU's.
	Backend string
	Threads int
	// Accelerator is the device layers run on besides the CPU ("" for
	// none); OffloadedLayers of Layers run there, and the output head
	// when OffloadedOutput.
	Accelerator     string
	OffloadedLayers int
	OffloadedOutput bool
	// DeviceNotes says, a line each, why a backend is not used.
	DeviceNotes []string
	// Remote is the connection (app/remote) whose server runs the model,
	// "" for a model that runs here; Path is then its RemotePath and
	// Backend the server's address. KV snapshots, memory and bandwidth
	// figures are a local model's only.
	Remote string
}

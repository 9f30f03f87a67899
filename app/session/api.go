package session

import api "github.com/churon/churon/app/api/session"

// The service's types, events and errors are defined in app/api/session,
// which front ends import without the engine; the manager's code and its
// callers use them under the names below.

type (
	CacheState          = api.CacheState
	Conversation        = api.Conversation
	Message             = api.Message
	SearchHit           = api.SearchHit
	Event               = api.Event
	Token               = api.Token
	Stats               = api.Stats
	Reason              = api.Reason
	Done                = api.Done
	Queued              = api.Queued
	Error               = api.Error
	ModelLoading        = api.ModelLoading
	ModelLoaded         = api.ModelLoaded
	DeviceFallback      = api.DeviceFallback
	ModelUnloaded       = api.ModelUnloaded
	MessageAdded        = api.MessageAdded
	MessagesChanged     = api.MessagesChanged
	ConversationChanged = api.ConversationChanged
	SettingChanged      = api.SettingChanged
	ComparisonsChanged  = api.ComparisonsChanged
	Status              = api.Status
	ModelInfo           = api.ModelInfo
	Notice              = api.Notice
	Settings            = api.Settings
	LoadError           = api.LoadError

	// API requests' answers (app/api/session/answer.go).
	Request        = api.Request
	RequestMessage = api.RequestMessage
	Answer         = api.Answer
	AnswerEvent    = api.AnswerEvent
	AnswerStarted  = api.AnswerStarted
	AnswerText     = api.AnswerText
	AnswerDone     = api.AnswerDone
	Usage          = api.Usage
	TokenLogprob   = api.TokenLogprob
	TopLogprob     = api.TopLogprob

	// Remote models (app/api/session/remote.go).
	RemoteEngines = api.RemoteEngines
	RemoteEngine  = api.RemoteEngine
	RemoteDelta   = api.RemoteDelta
)

const (
	RoleUser            = api.RoleUser
	RoleAssistant       = api.RoleAssistant
	CacheNone           = api.CacheNone
	CacheRAM            = api.CacheRAM
	CacheDisk           = api.CacheDisk
	DefaultKVDiskBudget = api.DefaultKVDiskBudget
	SettingGPU          = api.SettingGPU
	ReasonEOS           = api.ReasonEOS
	ReasonStop          = api.ReasonStop
	ReasonLength        = api.ReasonLength
	ReasonContext       = api.ReasonContext
	ReasonCancelled     = api.ReasonCancelled
	ReasonError         = api.ReasonError
	NoticeDropped       = api.NoticeDropped
	DemoPath            = api.DemoPath
	NoticeDemo          = api.NoticeDemo
	OverflowDrop        = api.OverflowDrop
	OverflowStop        = api.OverflowStop
	LoadNotModel        = api.LoadNotModel
	LoadIncomplete      = api.LoadIncomplete
	LoadUnsupported     = api.LoadUnsupported
	// RemotePrefix starts a remote model's path.
	RemotePrefix = api.RemotePrefix
)

var (
	ErrNoModel           = api.ErrNoModel
	ErrBusy              = api.ErrBusy
	ErrClosed            = api.ErrClosed
	ErrEmptyMessage      = api.ErrEmptyMessage
	ErrNotUserMessage    = api.ErrNotUserMessage
	ErrNoPrompt          = api.ErrNoPrompt
	ErrWrongConversation = api.ErrWrongConversation
	ErrTooLong           = api.ErrTooLong
	DefaultKVBudget      = api.DefaultKVBudget
	ParseNotice          = api.ParseNotice
	IsDemo               = api.IsDemo
	ErrBadRequest        = api.ErrBadRequest
	IsRemote             = api.IsRemote
	ParseRemote          = api.ParseRemote
	RemotePath           = api.RemotePath
	ErrNoRemotes         = api.ErrNoRemotes
	RemoteError          = api.RemoteError
)

var _ api.Service = (*Manager)(nil)

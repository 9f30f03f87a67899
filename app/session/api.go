package session

import api "github.com/churon/churon/app/api/session"

// The service's types, events and errors are defined in app/api/session,
// which front ends import without the engine; the manager's code and its
// callers use them under the names below.

type (
	CacheWhere          = api.CacheWhere
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
	Overflow            = api.Overflow
	LoadError           = api.LoadError
	LoadFailure         = api.LoadFailure
)

const (
	RoleUser            = api.RoleUser
	RoleAssistant       = api.RoleAssistant
	RoleNotice          = api.RoleNotice
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
	LoadOutOfMemory     = api.LoadOutOfMemory
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
)

var _ api.Service = (*Manager)(nil)

// Package settings is the settings dialog of Churon's window: the
// sampler and system prompt of the chat shown (or of the new chat, before
// its first message) with presets, and the app's language, chat cache
// budgets and devices.
package settings

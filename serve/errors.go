package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
)

// apiError is an error as OpenAI's API words it: an HTTP status and the
// body {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int
	Type    string // invalid_request_error, authentication_error, ...
	Param   string // the request field at fault, when there is one
	Code    string // a machine-readable reason, when there is one
	Message string
}

func (e *apiError) Error() string { return e.Message }

// The error types OpenAI's clients look at.
const (
	typeInvalid  = "invalid_request_error"
	typeAuth     = "authentication_error"
	typeNotFound = "not_found_error"
	typeRate     = "rate_limit_error"
	typeServer   = "server_error"
	typeOverload = "service_unavailable_error"
)

func badRequest(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalid, Param: param, Message: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON of an error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) body() errorBody {
	d := errorDetail{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		d.Param = &e.Param
	}
	if e.Code != "" {
		d.Code = &e.Code
	}
	return errorBody{Error: d}
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e.body())
}

// sessionError words an error of the session for the client.
func sessionError(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, session.ErrBadRequest):
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalid, Message: strings.TrimPrefix(err.Error(), session.ErrBadRequest.Error()+": ")}
	case errors.Is(err, session.ErrTooLong):
		detail := strings.TrimPrefix(err.Error(), session.ErrTooLong.Error()+": ")
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalid, Param: "messages", Code: "context_length_exceeded",
			Message: "the prompt and max_tokens do not fit in the model's context: " + detail}
	case errors.Is(err, session.ErrNoModel):
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeOverload, Code: "model_not_loaded",
			Message: "no model is loaded: load one in Churon first"}
	case errors.Is(err, session.ErrClosed):
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeOverload, Message: "Churon is closing"}
	case errors.Is(err, session.ErrBusy):
		return &apiError{Status: http.StatusConflict, Type: typeInvalid, Param: "conversation", Code: "conversation_busy",
			Message: "the conversation is already answering; wait for its answer or stop it"}
	case errors.Is(err, session.ErrEmptyMessage):
		return badRequest("messages", "the last message is empty")
	case isNotFound(err):
		return &apiError{Status: http.StatusNotFound, Type: typeNotFound, Param: "conversation", Code: "conversation_not_found",
			Message: "no such conversation: " + err.Error()}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: typeServer, Message: err.Error()}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

package wire

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/jsontext"
)

// The appenders below write the hot results and requests as encoding/json
// writes them (a test holds them to it byte for byte), without reflection:
// see Decoder for why. Cold operations keep encoding/json.

// AppendResult appends the JSON of an operation result: the hot result
// types by hand, anything else through encoding/json.
func AppendResult(buf []byte, result any) ([]byte, error) {
	switch r := result.(type) {
	case nil:
		return append(buf, "null"...), nil
	case StartResult:
		return AppendStartResult(buf, r)
	case InstanceResult:
		return appendInstanceResult(buf, &r)
	case CompleteJobResult:
		return appendCompleteJobResult(buf, r)
	case MessageResult:
		if len(r.Instances) == 0 {
			return append(buf, "{}"...), nil
		}
		buf = append(buf, `{"instances":[`...)
		for i, p := range r.Instances {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendCompleteJobResult(buf, p); err != nil {
				return nil, err
			}
		}
		return append(buf, "]}"...), nil
	case NowResult:
		buf = append(buf, `{"now":`...)
		return append(jsontext.AppendString(buf, r.Now), '}'), nil
	}
	part, err := json.Marshal(result)
	return append(buf, part...), err
}

// appendCompleteJobResult appends complete_job's result, also an element
// of publish_message's.
func appendCompleteJobResult(buf []byte, r CompleteJobResult) ([]byte, error) {
	buf = append(buf, `{"instanceKey":`...)
	buf = strconv.AppendInt(buf, r.InstanceKey, 10)
	if r.State != "" {
		buf = append(buf, `,"state":`...)
		buf = jsontext.AppendString(buf, string(r.State))
	}
	buf, err := appendJobs(buf, r.Jobs)
	return append(buf, '}'), err
}

// AppendStartResult appends start's result.
func AppendStartResult(buf []byte, r StartResult) ([]byte, error) {
	buf = append(buf, `{"instanceKey":`...)
	buf = strconv.AppendInt(buf, r.InstanceKey, 10)
	buf = append(buf, `,"state":`...)
	buf = jsontext.AppendString(buf, string(r.State))
	buf, err := appendJobs(buf, r.Jobs)
	return append(buf, '}'), err
}

// appendInstanceResult appends instance's result; incidents, rare, go
// through encoding/json.
func appendInstanceResult(buf []byte, r *InstanceResult) ([]byte, error) {
	buf = append(buf, `{"key":`...)
	buf = strconv.AppendInt(buf, r.Key, 10)
	buf = append(buf, `,"processId":`...)
	buf = jsontext.AppendString(buf, r.ProcessID)
	buf = append(buf, `,"state":`...)
	buf = jsontext.AppendString(buf, string(r.State))
	buf = append(buf, `,"message":`...)
	buf = jsontext.AppendString(buf, r.Message)
	buf = append(buf, `,"variables":`...)
	var err error
	if r.Variables == nil {
		buf = append(buf, "null"...)
	} else if buf, err = AppendValue(buf, r.Variables); err != nil {
		return nil, err
	}
	buf = append(buf, `,"incidents":`...)
	if r.Incidents != nil && len(r.Incidents) == 0 {
		buf = append(buf, "[]"...)
	} else {
		part, err := json.Marshal(r.Incidents)
		if err != nil {
			return nil, err
		}
		buf = append(buf, part...)
	}
	return append(buf, '}'), nil
}

// appendJobs appends a non-empty jobs field (omitempty).
func appendJobs(buf []byte, jobs []api.Job) ([]byte, error) {
	if len(jobs) == 0 {
		return buf, nil
	}
	buf = append(buf, `,"jobs":[`...)
	var err error
	for i := range jobs {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = AppendJob(buf, &jobs[i]); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

// AppendJob appends a Job record.
func AppendJob(buf []byte, j *api.Job) ([]byte, error) {
	buf = append(buf, `{"key":`...)
	buf = strconv.AppendInt(buf, j.Key, 10)
	buf = append(buf, `,"type":`...)
	buf = jsontext.AppendString(buf, j.Type)
	buf = append(buf, `,"processId":`...)
	buf = jsontext.AppendString(buf, j.ProcessID)
	buf = append(buf, `,"elementId":`...)
	buf = jsontext.AppendString(buf, j.ElementID)
	buf = append(buf, `,"instanceKey":`...)
	buf = strconv.AppendInt(buf, j.InstanceKey, 10)
	buf = append(buf, `,"retries":`...)
	buf = strconv.AppendInt(buf, int64(j.Retries), 10)
	if len(j.Headers) > 0 {
		buf = append(buf, `,"headers":{`...)
		for i, k := range slices.Sorted(maps.Keys(j.Headers)) {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jsontext.AppendString(buf, k), ':')
			buf = jsontext.AppendString(buf, j.Headers[k])
		}
		buf = append(buf, '}')
	}
	if len(j.Variables) > 0 {
		buf = append(buf, `,"variables":`...)
		var err error
		if buf, err = AppendValue(buf, j.Variables); err != nil {
			return nil, err
		}
	}
	if j.ErrorMessage != "" {
		buf = append(buf, `,"errorMessage":`...)
		buf = jsontext.AppendString(buf, j.ErrorMessage)
	}
	if y := j.Created.Year(); y < 0 || y > 9999 {
		_, err := json.Marshal(j.Created) // its error for a year JSON cannot carry
		return nil, err
	}
	buf = append(buf, `,"created":`...)
	buf = AppendTime(buf, j.Created)
	if j.Worker != "" {
		buf = append(buf, `,"worker":`...)
		buf = jsontext.AppendString(buf, j.Worker)
	}
	if j.Activation != 0 {
		buf = append(buf, `,"activation":`...)
		buf = strconv.AppendInt(buf, j.Activation, 10)
	}
	if j.Deadline != nil {
		buf = append(buf, `,"deadline":`...)
		buf = AppendTime(buf, *j.Deadline)
	}
	if j.RetryAt != nil {
		buf = append(buf, `,"retryAt":`...)
		buf = AppendTime(buf, *j.RetryAt)
	}
	return append(buf, '}'), nil
}

// AppendTime appends t as a JSON string in RFC 3339 with nanoseconds, as
// encoding/json writes a time.Time.
func AppendTime(buf []byte, t time.Time) []byte {
	buf = append(buf, '"')
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

// AppendStartRequest appends start's request; the variables are
// variables as engine.CheckVariables accepts them.
func AppendStartRequest(buf []byte, r StartRequest) ([]byte, error) {
	buf = append(buf, `{"processId":`...)
	buf = jsontext.AppendString(buf, r.ProcessID)
	buf, err := appendVariables(buf, r.Variables)
	if r.Version != 0 {
		buf = append(buf, `,"version":`...)
		buf = strconv.AppendInt(buf, int64(r.Version), 10)
	}
	return append(buf, '}'), err
}

// AppendMessageRequest appends publish_message's request.
func AppendMessageRequest(buf []byte, r MessageRequest) ([]byte, error) {
	buf = append(buf, `{"name":`...)
	buf = jsontext.AppendString(buf, r.Name)
	if r.CorrelationKey != "" {
		buf = append(buf, `,"correlationKey":`...)
		buf = jsontext.AppendString(buf, r.CorrelationKey)
	}
	buf, err := appendVariables(buf, r.Variables)
	if err != nil {
		return nil, err
	}
	if r.TTLMs != 0 {
		buf = append(buf, `,"ttlMs":`...)
		if buf, err = appendFloat(buf, r.TTLMs); err != nil {
			return nil, err
		}
	}
	if r.MessageID != "" {
		buf = append(buf, `,"messageId":`...)
		buf = jsontext.AppendString(buf, r.MessageID)
	}
	return append(buf, '}'), nil
}

// AppendCompleteJobRequest appends complete_job's request.
func AppendCompleteJobRequest(buf []byte, r CompleteJobRequest) ([]byte, error) {
	buf = append(buf, `{"jobKey":`...)
	if r.JobKey == nil {
		buf = append(buf, "null"...)
	} else {
		buf = strconv.AppendInt(buf, *r.JobKey, 10)
	}
	buf, err := appendVariables(buf, r.Variables)
	if r.Activation != 0 {
		buf = append(buf, `,"activation":`...)
		buf = strconv.AppendInt(buf, r.Activation, 10)
	}
	return append(buf, '}'), err
}

// AppendInstanceRequest appends the request of tokens, instance, history
// and cancel.
func AppendInstanceRequest(buf []byte, r InstanceRequest) []byte {
	buf = append(buf, `{"instanceKey":`...)
	if r.InstanceKey == nil {
		return append(buf, "null}"...)
	}
	buf = strconv.AppendInt(buf, *r.InstanceKey, 10)
	return append(buf, '}')
}

// appendVariables appends a non-empty variables field (omitempty).
func appendVariables(buf []byte, vars map[string]any) ([]byte, error) {
	if len(vars) > 0 {
		buf = append(buf, `,"variables":`...)
		var err error
		if buf, err = AppendValue(buf, vars); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// AppendValue appends a variable value: JSON's own types (and Go's
// integers) by hand, maps with their keys sorted, anything else through
// encoding/json.
func AppendValue(buf []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case string:
		return jsontext.AppendString(buf, v), nil
	case bool:
		return strconv.AppendBool(buf, v), nil
	case float64:
		return appendFloat(buf, v)
	case int:
		return strconv.AppendInt(buf, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(buf, v, 10), nil
	case []any:
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, err = AppendValue(buf, e); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jsontext.AppendString(buf, k), ':')
			if buf, err = AppendValue(buf, v[k]); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	}
	part, err := json.Marshal(v)
	return append(buf, part...), err
}

// appendFloat writes f as encoding/json does: the shortest form, with an
// exponent only below 1e-6 or from 1e21, and no NaN or infinity.
func appendFloat(buf []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		_, err := json.Marshal(f) // its UnsupportedValueError
		return nil, err
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7, as encoding/json writes it.
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf, nil
}

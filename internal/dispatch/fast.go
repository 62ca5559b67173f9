package dispatch

import "github.com/flowtrack/flowtrack/internal/wire"

// The hot requests (start, complete_job, publish_message, advance, and
// the instance key of tokens, instance, history and cancel) are
// decoded by wire.Decoder, without reflection, when they are plain; on
// anything else, the strict decoder (decode) decodes them again from the
// start and reports the problem. Both give the same request for every
// input the fast path accepts (TestFastDecode, FuzzRequest).

// decodeStart decodes start's request.
func decodeStart(data []byte, req *wire.StartRequest) error {
	if fastStart(data, req) {
		return nil
	}
	*req = wire.StartRequest{}
	return decode("start", data, req)
}

// fastStart is decodeStart's fast path: false leaves req to be reset.
func fastStart(data []byte, req *wire.StartRequest) bool {
	d := wire.NewDecoder(data, maxRequestDepth)
	return d.Document(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "processId":
			req.ProcessID, ok = d.String()
		case "variables":
			req.Variables, ok = d.Variables()
		}
		return ok
	})
}

// decodeCompleteJob decodes complete_job's request.
func decodeCompleteJob(data []byte, req *wire.CompleteJobRequest) error {
	if fastCompleteJob(data, req) {
		return nil
	}
	*req = wire.CompleteJobRequest{}
	return decode("complete_job", data, req)
}

// fastCompleteJob is decodeCompleteJob's fast path: false leaves req to be reset.
func fastCompleteJob(data []byte, req *wire.CompleteJobRequest) bool {
	d := wire.NewDecoder(data, maxRequestDepth)
	return d.Document(func(key []byte) bool {
		switch string(key) {
		case "jobKey":
			k, ok := d.Int64()
			req.JobKey = &k
			return ok
		case "variables":
			var ok bool
			req.Variables, ok = d.Variables()
			return ok
		case "activation":
			a, ok := d.Int64()
			req.Activation = a
			return ok
		}
		return false
	})
}

// decodeMessage decodes publish_message's request.
func decodeMessage(data []byte, req *wire.MessageRequest) error {
	if fastMessage(data, req) {
		return nil
	}
	*req = wire.MessageRequest{}
	return decode("publish_message", data, req)
}

// fastMessage is decodeMessage's fast path: false leaves req to be reset.
func fastMessage(data []byte, req *wire.MessageRequest) bool {
	d := wire.NewDecoder(data, maxRequestDepth)
	return d.Document(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "name":
			req.Name, ok = d.String()
		case "correlationKey":
			req.CorrelationKey, ok = d.String()
		case "variables":
			req.Variables, ok = d.Variables()
		case "ttlMs":
			req.TTLMs, ok = d.Float64()
		case "messageId":
			req.MessageID, ok = d.String()
		}
		return ok
	})
}

// decodeAdvance decodes advance's request.
func decodeAdvance(data []byte, req *wire.AdvanceRequest) error {
	if fastAdvance(data, req) {
		return nil
	}
	*req = wire.AdvanceRequest{}
	return decode("advance", data, req)
}

// fastAdvance is decodeAdvance's fast path: false leaves req to be reset.
func fastAdvance(data []byte, req *wire.AdvanceRequest) bool {
	d := wire.NewDecoder(data, maxRequestDepth)
	return d.Document(func(key []byte) bool {
		switch string(key) {
		case "byMs":
			ms, ok := d.Float64()
			req.ByMs = &ms
			return ok
		case "to":
			to, ok := d.String()
			req.To = &to
			return ok
		}
		return false
	})
}

// decodeInstance decodes the request of tokens, instance, history and
// cancel.
func decodeInstance(op string, data []byte, req *wire.InstanceRequest) error {
	if fastInstance(data, req) {
		return nil
	}
	*req = wire.InstanceRequest{}
	return decode(op, data, req)
}

// fastInstance is decodeInstance's fast path: false leaves req to be reset.
func fastInstance(data []byte, req *wire.InstanceRequest) bool {
	d := wire.NewDecoder(data, maxRequestDepth)
	return d.Document(func(key []byte) bool {
		if string(key) != "instanceKey" {
			return false
		}
		k, ok := d.Int64()
		req.InstanceKey = &k
		return ok
	})
}

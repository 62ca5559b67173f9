package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestModeller_Camunda8Claim runs a process exactly as Camunda Modeler 5
// exports it for Camunda 8: FEEL conditions, io mappings, retries as an
// expression, a message keyed by a zeebe:subscription and a timer boundary.
func TestModeller_Camunda8Claim(t *testing.T) {
	for _, tc := range []struct {
		name      string
		amount    float64
		score     float64
		reviewed  bool
		escalated bool
	}{
		{"small plausible claim is settled directly", 300, 0.9, false, false},
		{"large claim is reviewed", 5000, 0.9, true, false},
		{"doubtful claim not reviewed in time escalates", 300, 0.1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deployFile(t, e, "claim_camunda8.bpmn")
			inst, err := e.Start(ctxT(t), "claim", map[string]any{
				"claim": map[string]any{"id": "C-7", "amount": tc.amount}, "maxRetries": 5,
			})
			require.NoError(t, err)
			assess := jobOf(t, e, "assess")
			assert.Equal(t, 5, assess.Retries, "retries come from the expression")
			assert.Equal(t, "C-7", assess.Variables["claimId"])
			require.NoError(t, e.CompleteJob(ctxT(t), assess.Key, map[string]any{"score": tc.score}))
			require.NoError(t, e.Settle(ctxT(t)))
			assert.Equal(t, tc.score >= 0.5, inst.Variables()["plausible"])
			if tc.reviewed {
				review := jobOf(t, e, "userTask")
				if tc.escalated {
					require.NoError(t, e.Advance(ctxT(t), 48*time.Hour))
					st, _ := inst.Wait(ctxT(t))
					require.Equal(t, engine.Completed, st)
					assert.Contains(t, completed(inst), "Event_escalated")
					require.ErrorIs(t, e.CompleteJob(ctxT(t), review.Key, nil), engine.ErrUnknownJob)
					return
				}
				require.NoError(t, e.CompleteJob(ctxT(t), review.Key, nil))
			}
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "documents-received", CorrelationKey: "C-8"}))
			require.NoError(t, e.Settle(ctxT(t)))
			assert.Equal(t, engine.Active, inst.State(), "another claim's documents do not correlate")
			require.NoError(t, e.PublishMessage(ctxT(t), engine.Message{Name: "documents-received", CorrelationKey: "C-7"}))
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Contains(t, completed(inst), "Event_paid")
			assert.Equal(t, tc.amount, inst.Variables()["amount"], "the start event's output mapping")
		})
	}
}

// TestModeller_Camunda7Invoice runs a Camunda Modeler 5 export for
// Camunda 7: external tasks by topic, camunda:inputOutput, JUEL conditions.
func TestModeller_Camunda7Invoice(t *testing.T) {
	for _, tc := range []struct {
		name           string
		amount         float64
		classification string
		approved       *bool
		end            string
	}{
		{"small invoice is archived", 200, "office", nil, "EndEvent_done"},
		{"travel invoice approved", 200, "travel", ptr(true), "EndEvent_done"},
		{"large invoice rejected", 5000, "office", ptr(false), "EndEvent_rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deployFile(t, e, "invoice_camunda7.bpmn")
			inst, err := e.Start(ctxT(t), "invoice", map[string]any{"amount": tc.amount})
			require.NoError(t, err)
			classify := jobOf(t, e, "classify-invoice")
			assert.Equal(t, "mailroom", classify.Variables["source"])
			assert.InDelta(t, tc.amount/1.19, classify.Variables["net"], 1e-9)
			require.NoError(t, e.CompleteJob(ctxT(t), classify.Key, map[string]any{"classification": tc.classification}))
			if tc.approved != nil {
				require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "userTask").Key, map[string]any{"approved": *tc.approved}))
			}
			if tc.end == "EndEvent_done" {
				require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "archive-invoice").Key, nil))
			}
			st, _ := inst.Wait(ctxT(t))
			require.Equal(t, engine.Completed, st)
			assert.Contains(t, completed(inst), tc.end)
			assert.Equal(t, tc.classification, inst.Variables()["category"])
		})
	}
}

func ptr[T any](v T) *T { return &v }

package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

func TestEngine_Definitions(t *testing.T) {
	e := newEngine(t)
	ctx := ctxT(t)
	v2XML := strings.ReplaceAll(oneJobXML, `id="task"`, `id="task2"`)
	v2XML = strings.ReplaceAll(v2XML, `targetRef="task"`, `targetRef="task2"`)
	v2XML = strings.ReplaceAll(v2XML, `sourceRef="task"`, `sourceRef="task2"`)

	_, err := e.Deploy("v1.bpmn", []byte(oneJobXML))
	require.NoError(t, err)
	old, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	_, err = e.Deploy("v2.bpmn", []byte(v2XML))
	require.NoError(t, err)

	defs := e.Definitions()
	require.Len(t, defs, 2)
	require.Equal(t, []int{1, 2}, []int{defs[0].Version, defs[1].Version})
	require.Equal(t, "v1.bpmn", defs[0].Resource)
	require.False(t, defs[0].Latest)
	require.True(t, defs[1].Latest)

	name, xml, err := e.DefinitionXML("p", 1)
	require.NoError(t, err)
	require.Equal(t, "v1.bpmn", name)
	require.Equal(t, oneJobXML, string(xml))
	_, latest, err := e.DefinitionXML("p", 0)
	require.NoError(t, err)
	require.Equal(t, v2XML, string(latest))
	_, _, err = e.DefinitionXML("p", 3)
	require.ErrorIs(t, err, engine.ErrUnknownProcess)
	require.ErrorContains(t, err, "version 3")

	newest, err := e.Start(ctx, "p", nil)
	require.NoError(t, err)
	pinned, err := e.StartVersion(ctx, "p", 1, nil)
	require.NoError(t, err)
	_, err = e.StartVersion(ctx, "p", 7, nil)
	require.ErrorIs(t, err, engine.ErrUnknownProcess)
	_, err = e.StartVersion(ctx, "p", -1, nil)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, e.Settle(ctx))

	// Each instance runs on its version: the old ones wait at "task", the
	// new one at "task2", and they finish there.
	at := map[int64]string{}
	for _, j := range e.Jobs(engine.JobFilter{Type: "work"}) {
		at[j.InstanceKey] = j.ElementID
		require.NoError(t, e.CompleteJob(ctx, j.Key, nil))
	}
	require.Equal(t, map[int64]string{old.Key(): "task", newest.Key(): "task2", pinned.Key(): "task"}, at)
	for _, inst := range []*engine.Instance{old, newest, pinned} {
		state, err := inst.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.Completed, state)
	}
	require.Contains(t, completed(old), "task")
	require.Contains(t, completed(newest), "task2")
}

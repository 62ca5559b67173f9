package server

import (
	"errors"
	"fmt"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// ErrNATSNotReady is returned by StartNATS when the embedded NATS server
// does not accept connections in time.
var ErrNATSNotReady = errors.New("the embedded NATS server did not become ready")

// StartNATS starts the single-node NATS server flowtrack serve embeds:
// JetStream on, its state under dir, listening on 127.0.0.1 only, on port
// (0 picks a free one; read it from ClientURL). Every JetStream write is
// synced to disk before it is acknowledged (sync_always), so a store
// commit that returned survives a power loss as a boltstore one does.
// Shut it down with Shutdown and WaitForShutdown.
func StartNATS(dir string, port int) (*natsserver.Server, error) {
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	ns, err := natsserver.NewServer(&natsserver.Options{
		ServerName: "flowtrack",
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
		// The HTTP monitor, cluster routes and leaf nodes stay off.
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server in %s: %w", dir, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS server in %s: %w", dir, ErrNATSNotReady)
	}
	return ns, nil
}

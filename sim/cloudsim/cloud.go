// Package cloudsim wires the simulated cloud together: the core (package core)
// with every built-in face (packages under sim/face), served by a Server
// (package server), in-process (Start, for `mpool up` and tests) or as its
// own process (NewCommand, `mpool cloud`). It is the one package of the
// simulator that knows every face; the product imports it only from the
// commands that start the cloud.
package cloudsim

import (
	"context"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/sim/server"
)

// BuiltinFaces are the faces every cloud serves besides the local face, in
// the order they are served and printed: the registry of faces, one line
// per cloud.
func BuiltinFaces() []core.Face {
	return []core.Face{&azureface.AzureFace{}, &awsface.AWSFace{}, &eksface.EKSFace{}, &gcpface.GCPFace{}}
}

// Start starts the simulated cloud with the built-in faces (BuiltinFaces)
// and those of opts.Faces: a face of opts.Faces with a built-in face's name
// replaces it (e.g. one configured otherwise for a test), in its place; the
// others follow. See server.Start.
func Start(ctx context.Context, opts core.Options) (*server.Server, error) {
	opts.Faces = withBuiltins(opts.Faces)
	return server.Start(ctx, opts)
}

// withBuiltins returns the built-in faces, each replaced by the face of
// extra with its name, followed by the rest of extra.
func withBuiltins(extra []core.Face) []core.Face {
	builtin := BuiltinFaces()
	extra = append([]core.Face(nil), extra...)
	for i, f := range builtin {
		for j, e := range extra {
			if e != nil && f.Name() == e.Name() {
				builtin[i] = e
				extra = append(extra[:j:j], extra[j+1:]...)
				break
			}
		}
	}
	return append(builtin, extra...)
}

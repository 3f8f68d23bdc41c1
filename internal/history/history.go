// Package history keeps the revisions of a MachinePool's instance model, as a
// Deployment keeps its ReplicaSets and a StatefulSet its ControllerRevisions:
// each model the engine rolls a pool to is an apps/v1 ControllerRevision in the
// MachinePool's namespace, owned by the MachinePool (so it goes with it), that
// holds what made the model — the MachinePool's spec.template, the
// infrastructure pool's spec and the bootstrap config's spec — and the model
// hash. A model seen again (an undo) moves its revision to the top, as a
// Deployment's does. The history is bounded (RevisionHistoryLimitAnnotation,
// DefaultHistoryLimit).
//
// Record is what the engine calls when a pool's model changes; List, Changes
// and Restore serve `mpool rollout history` and `mpool rollout undo`.
package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/util/json"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// MachinePoolLabel names the MachinePool a ControllerRevision belongs to.
	MachinePoolLabel = "mpool.dev/machine-pool"
	// ModelHashAnnotation holds a revision's model hash.
	ModelHashAnnotation = "mpool.dev/model-hash"
	// RecordedAnnotation, on the infrastructure pool, is the hash of what
	// the engine last recorded (the model and the settings applied in
	// place): when it matches the pool's, recording costs nothing.
	RecordedAnnotation = "mpool.dev/revision"
	// RevisionHistoryLimitAnnotation, on the MachinePool, bounds how many
	// revisions are kept (DefaultHistoryLimit; at least 2: the current one
	// and one to undo to).
	RevisionHistoryLimitAnnotation = "mpool.dev/revision-history-limit"
	// ChangeCauseAnnotation, on the MachinePool when its model changes, is
	// copied to the revision, as a Deployment's is.
	ChangeCauseAnnotation = "kubernetes.io/change-cause"
	// DefaultHistoryLimit is how many revisions are kept by default (a
	// Deployment's revisionHistoryLimit).
	DefaultHistoryLimit = 10
)

// Object is the part of an object a revision restores: its spec.
type Object struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Name       string          `json:"name"`
	Spec       json.RawMessage `json:"spec"`
}

// Snapshot is what made a model: the MachinePool's spec.template, the
// infrastructure pool's spec and the bootstrap config's spec (nil when the
// MachinePool names its bootstrap data directly).
type Snapshot struct {
	Template       json.RawMessage `json:"template"`
	Infrastructure Object          `json:"infrastructure"`
	Bootstrap      *Object         `json:"bootstrap,omitempty"`
}

// Revision is one recorded model.
type Revision struct {
	Number      int64
	ModelHash   string
	ChangeCause string
	Created     metav1.Time
	Snapshot    Snapshot
	// Object is the ControllerRevision it was read from.
	Object *appsv1.ControllerRevision
}

// NotRestored lists the fields of an infrastructure pool's spec that a
// revision neither compares nor restores: what the engine or the cloud
// writes (providerIDList) and the pool's size range and budgets, which an
// undo keeps as they are now (as a Deployment's undo keeps its replicas and
// strategy).
var NotRestored = []string{"providerIDList", "strategy", "refreshPreferences", "minSize", "maxSize", "scaling"}

// TakeSnapshot builds the snapshot of mp, its infrastructure pool and its
// bootstrap config (nil for none); the objects may be typed or
// unstructured.
func TakeSnapshot(mp *clusterv1.MachinePool, pool, bootstrap client.Object) (Snapshot, error) {
	tmpl := mp.Spec.Template.DeepCopy()
	// The MachinePool controller writes the data secret's name from the
	// bootstrap config's status: not part of what the user changed.
	tmpl.Spec.Bootstrap.DataSecretName = nil
	var s Snapshot
	var err error
	if s.Template, err = json.Marshal(tmpl); err != nil {
		return s, err
	}
	if s.Infrastructure, err = objectOf(pool, NotRestored...); err != nil {
		return s, err
	}
	if bootstrap != nil {
		o, err := objectOf(bootstrap)
		if err != nil {
			return s, err
		}
		s.Bootstrap = &o
	}
	return s, nil
}

// objectOf returns obj's identity and spec without the fields drop.
func objectOf(obj client.Object, drop ...string) (Object, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return Object{}, err
	}
	spec, _ := u["spec"].(map[string]any)
	if spec = maps.Clone(spec); spec == nil {
		spec = map[string]any{}
	}
	for _, f := range drop {
		delete(spec, f)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return Object{}, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		api, _ := u["apiVersion"].(string)
		kind, _ := u["kind"].(string)
		gvk = schema.FromAPIVersionAndKind(api, kind)
	}
	return Object{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), Spec: raw}, nil
}

// Name is the name of the ControllerRevision of mp's model hash.
func Name(mp string, modelHash string) string {
	sum := sha256.Sum256([]byte(modelHash))
	return fmt.Sprintf("%s-%s", trim(mp, 52), hex.EncodeToString(sum[:])[:10])
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// List returns mp's revisions, oldest first.
func List(ctx context.Context, c client.Reader, mp *clusterv1.MachinePool) ([]Revision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(mp.Namespace), client.MatchingLabels{MachinePoolLabel: mp.Name}); err != nil {
		return nil, fmt.Errorf("listing the revisions of MachinePool %s/%s: %w", mp.Namespace, mp.Name, err)
	}
	var out []Revision
	for i := range list.Items {
		cr := &list.Items[i]
		if !ownedBy(cr, mp) {
			continue // a MachinePool of the same name, deleted and created again
		}
		r := Revision{Number: cr.Revision, ModelHash: cr.Annotations[ModelHashAnnotation], ChangeCause: cr.Annotations[ChangeCauseAnnotation], Created: cr.CreationTimestamp, Object: cr}
		if err := json.Unmarshal(cr.Data.Raw, &r.Snapshot); err != nil {
			return nil, fmt.Errorf("revision %s: %w", cr.Name, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Revision) int { return int(a.Number - b.Number) })
	return out, nil
}

func ownedBy(o metav1.Object, owner metav1.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// HistoryLimit reads mp's RevisionHistoryLimitAnnotation.
func HistoryLimit(mp *clusterv1.MachinePool) (int, error) {
	v, ok := mp.Annotations[RevisionHistoryLimitAnnotation]
	if !ok {
		return DefaultHistoryLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		return DefaultHistoryLimit, fmt.Errorf("annotation %s=%q: want a whole number of at least 2 (the current revision and one to undo to); using %d", RevisionHistoryLimitAnnotation, v, DefaultHistoryLimit)
	}
	return n, nil
}

// Record makes modelHash mp's newest revision, with snapshot s: a new
// ControllerRevision, or the one of the same model moved to the top (an
// undo) or, already there, given s (settings applied in place changed), and
// deletes the oldest beyond limit. It returns the revision's
// number. r reads (an uncached reader: revisions change rarely and a cache
// of them would cost every manager a watch); c writes.
//
// A ControllerRevision's data is immutable: a revision whose snapshot
// changes is replaced (deleted and created again under its name), and the
// data is written in the form the API server gives it back after a patch
// (Canonical), so that the garbage collector's and kubectl's patches of its
// metadata are not refused as changing it.
func Record(ctx context.Context, r client.Reader, c client.Client, mp *clusterv1.MachinePool, modelHash string, s Snapshot, limit int) (int64, error) {
	revs, err := List(ctx, r, mp)
	if err != nil {
		return 0, err
	}
	data, err := Canonical(s)
	if err != nil {
		return 0, err
	}
	var top int64
	var same *appsv1.ControllerRevision
	for _, rev := range revs {
		top = max(top, rev.Number)
		if rev.ModelHash == modelHash {
			same = rev.Object
		}
	}
	number := top + 1
	switch {
	case same != nil && same.Revision == top && string(same.Data.Raw) == string(data):
		return top, nil
	case same != nil && string(same.Data.Raw) == string(data):
		// An undo: the revision moves to the top, as a Deployment's does.
		same.Revision = number
		setCause(same, mp)
		if err := c.Update(ctx, same); err != nil {
			return 0, fmt.Errorf("moving revision %s to the top: %w", same.Name, err)
		}
	default:
		if same != nil && same.Revision == top {
			// The same model with other settings (applied in place, not
			// rolled): the revision keeps what an undo to it should
			// restore, under its number.
			number = top
		}
		cr := newRevision(mp, modelHash, data, number)
		if err := put(ctx, r, c, cr, same); err != nil {
			return 0, fmt.Errorf("recording revision %d of MachinePool %s/%s: %w", number, mp.Namespace, mp.Name, err)
		}
		revs = append(revs, Revision{Number: number, ModelHash: modelHash, Object: cr})
	}
	// Bound the history: the oldest go, never the newest.
	kept := 0
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].ModelHash == modelHash {
			continue
		}
		kept++
		if kept < limit {
			continue
		}
		if err := c.Delete(ctx, revs[i].Object); err != nil && !apierrors.IsNotFound(err) {
			return number, fmt.Errorf("pruning revision %s: %w", revs[i].Object.Name, err)
		}
	}
	return number, nil
}

// Canonical encodes s as a ControllerRevision's data: the JSON the API
// server writes back when it applies a strategic merge patch to the
// revision (the garbage collector's, removing an owner reference; kubectl
// label), every object's keys in order. Data in any other form — a
// struct's field order — would come back changed, and the API server
// refuses any change of a revision's data.
func Canonical(s Snapshot) ([]byte, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := kjson.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// newRevision is the ControllerRevision of mp's model modelHash.
func newRevision(mp *clusterv1.MachinePool, modelHash string, data []byte, number int64) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   mp.Namespace,
			Name:        Name(mp.Name, modelHash),
			Labels:      map[string]string{MachinePoolLabel: mp.Name, clusterv1.ClusterNameLabel: mp.Spec.ClusterName},
			Annotations: map[string]string{ModelHashAnnotation: modelHash},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Name: mp.Name, UID: mp.UID,
			}},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
	setCause(cr, mp)
	return cr
}

// put writes want, replacing old (the MachinePool's revision of its name
// whose data changed; nil for none). A revision of its name that the
// MachinePool does not own was left by an earlier MachinePool of the same
// name — deleted with its dependents orphaned (`kubectl delete
// --cascade=orphan`), or created again before the garbage collector came to
// its revisions — and List does not count it: it is taken over, as a
// StatefulSet adopts the orphaned revisions it matches, so that the new
// pool's model is in its history and an undo to it works. One the
// MachinePool owns was recorded by a pass whose write of RecordedAnnotation
// was lost: it stands.
func put(ctx context.Context, r client.Reader, c client.Client, want, old *appsv1.ControllerRevision) error {
	if old != nil {
		return replace(ctx, c, old, want)
	}
	err := c.Create(ctx, want)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur := &appsv1.ControllerRevision{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(want), cur); err != nil {
		return fmt.Errorf("reading revision %s, which already exists: %w", want.Name, err)
	}
	for _, ref := range cur.OwnerReferences {
		if ref.UID == want.OwnerReferences[0].UID {
			return nil
		}
	}
	if string(cur.Data.Raw) != string(want.Data.Raw) {
		if err := replace(ctx, c, cur, want); err != nil {
			return fmt.Errorf("taking over revision %s, left by an earlier MachinePool of the same name: %w", want.Name, err)
		}
		return nil
	}
	cur.OwnerReferences, cur.Labels, cur.Annotations, cur.Revision = want.OwnerReferences, want.Labels, want.Annotations, want.Revision
	if err := c.Update(ctx, cur); err != nil {
		return fmt.Errorf("taking over revision %s, left by an earlier MachinePool of the same name: %w", want.Name, err)
	}
	*want = *cur
	return nil
}

// replace deletes old (that very object: a precondition on its UID) and
// creates want in its place: the way to change a revision's data.
func replace(ctx context.Context, c client.Client, old, want *appsv1.ControllerRevision) error {
	uid := old.UID
	if err := c.Delete(ctx, old, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting revision %s to write its new data: %w", old.Name, err)
	}
	if err := c.Create(ctx, want); err != nil {
		return fmt.Errorf("creating revision %s again with its new data: %w", want.Name, err)
	}
	return nil
}

func setCause(cr *appsv1.ControllerRevision, mp *clusterv1.MachinePool) {
	if cause, ok := mp.Annotations[ChangeCauseAnnotation]; ok {
		if cr.Annotations == nil {
			cr.Annotations = map[string]string{}
		}
		cr.Annotations[ChangeCauseAnnotation] = cause
	} else {
		delete(cr.Annotations, ChangeCauseAnnotation)
	}
}

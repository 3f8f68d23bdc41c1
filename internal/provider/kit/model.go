package kit

import (
	"fmt"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ModelPart reads a provider's part of a scalegroup.Model (its Provider
// or InPlace, v), which its Adapter put there as a T or a *T: ok is false
// when there is none (nil, or a nil *T). A part of another type is a bug
// of the Adapter that cannot be retried away: an Invalid error naming what
// was read (what, e.g. "the model's Azure part") and both types.
func ModelPart[T any](v any, what string) (part T, ok bool, err error) {
	switch p := v.(type) {
	case nil:
		return part, false, nil
	case T:
		return p, true, nil
	case *T:
		if p == nil {
			return part, false, nil
		}
		return *p, true, nil
	default:
		return part, false, scalegroup.NewInvalid(fmt.Sprintf("%s is a %T, not a %T", what, v, part))
	}
}

package aws

import "context"

// EachPage calls fn with every page of an AWS SDK paginator, given by its
// methods: EachPage(ctx, p.HasMorePages, p.NextPage, fn). It returns
// NextPage's first error as the SDK returns it (the caller maps it, with
// CloudError or otherwise), after the pages before it were handed to fn.
func EachPage[P, O any](ctx context.Context, more func() bool, next func(context.Context, ...func(*O)) (*P, error), fn func(*P)) error {
	for more() {
		page, err := next(ctx)
		if err != nil {
			return err
		}
		fn(page)
	}
	return nil
}

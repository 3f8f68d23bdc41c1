// Package apitest tests mpool's API against a real kube-apiserver: the committed CRDs and
// deepcopy functions are up to date, bad input is refused at admission with a message
// naming the field, and the example manifests under examples/seeds apply and read back
// unchanged.
//
// Some tests compare with the seed documents, the upstream Cluster API and provider
// pages the examples were copied from, which live outside the repository: they find them
// through $MPOOL_SEEDS_DIR or in ../shared/seeds beside the checkout, are required where
// CI=true, and are skipped, saying what they would check, on a clone without them.
package apitest

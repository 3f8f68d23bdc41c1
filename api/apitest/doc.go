// Package apitest tests mpool's API against a real kube-apiserver: the committed CRDs and
// deepcopy functions are up to date, bad input is refused at admission with a message
// naming the field, and the seeds' example manifests apply and read back unchanged.
package apitest

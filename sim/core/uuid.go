package core

import "fmt"

// UUIDFrom formats 16 bytes as a version-4-shaped UUID, as faces name
// their resources and requests.
func UUIDFrom(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

package core

import "encoding/json"

// A face keeps its payloads (a group's, an instance's, its own data) as
// JSON of a Go type of its own. These helpers read and write them as such,
// so that no face writes the decode-change-encode steps again.

// DecodePayload is raw decoded as a T: the zero T when raw is empty, and
// what decodes of it otherwise. A face reads its own payloads leniently: it
// wrote them, and a reader has no error to report.
func DecodePayload[T any](raw json.RawMessage) T {
	var v T
	_ = json.Unmarshal(raw, &v)
	return v
}

// EditPayload is a PayloadFunc over a payload kept as a T: it decodes the
// payload (the zero T when there is none), lets edit change it and encodes
// the result. A payload that does not decode as a T, or edit's error, leaves
// the payload unchanged and is returned. Like every PayloadFunc, edit runs
// with the core's lock held.
func EditPayload[T any](edit func(*T) error) PayloadFunc {
	return func(old json.RawMessage) (json.RawMessage, error) {
		var v T
		if len(old) > 0 {
			if err := json.Unmarshal(old, &v); err != nil {
				return nil, err
			}
		}
		if err := edit(&v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
}

// ReplacePayload is a PayloadFunc that replaces the payload by v encoded.
func ReplacePayload(v any) PayloadFunc {
	return func(json.RawMessage) (json.RawMessage, error) { return json.Marshal(v) }
}

// UpdateFaceDataAs changes face's own data kept as a T, as EditPayload
// does, and returns it as written.
func UpdateFaceDataAs[T any](c *Cloud, face string, edit func(*T) error) (T, error) {
	var out T
	_, err := c.UpdateFaceData(face, EditPayload(func(d *T) error {
		if err := edit(d); err != nil {
			return err
		}
		out = *d
		return nil
	}))
	return out, err
}

// FaceRecordAs is the record key of face's records decoded as a T (the
// zero T when there is none).
func FaceRecordAs[T any](c *Cloud, face, key string) T {
	return DecodePayload[T](c.FaceRecord(face, key))
}

// UpdateFaceRecordAs changes the record key of face's records kept as a T,
// as EditPayload does, and returns it as written.
func UpdateFaceRecordAs[T any](c *Cloud, face, key string, edit func(*T) error) (T, error) {
	var out T
	_, err := c.UpdateFaceRecord(face, key, EditPayload(func(d *T) error {
		if err := edit(d); err != nil {
			return err
		}
		out = *d
		return nil
	}))
	return out, err
}

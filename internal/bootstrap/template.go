package bootstrap

import (
	"bytes"
	"errors"
	"fmt"
	"text/template"
)

// maxRenderedTemplateBytes bounds the rendering of one file's template, as
// in Cluster API.
const maxRenderedTemplateBytes = 1 << 20

// errTemplateTooLarge is returned when a template renders to more than
// maxRenderedTemplateBytes.
var errTemplateTooLarge = fmt.Errorf("rendered output exceeds the %d byte limit", maxRenderedTemplateBytes)

// templateData is the data of a file whose contentFormat is Template, as
// Cluster API passes it: lower-case keys, and controlPlane only when its
// version is known, so that a template can test for it with
// {{ if .controlPlane }}.
func templateData(controlPlaneVersion string) map[string]any {
	if controlPlaneVersion == "" {
		return map[string]any{}
	}
	return map[string]any{"controlPlane": map[string]any{"version": controlPlaneVersion}}
}

// renderTemplate renders content as a Go text/template with templateData.
func renderTemplate(content, controlPlaneVersion string) ([]byte, error) {
	tpl, err := template.New("content").Parse(content)
	if err != nil {
		return nil, fmt.Errorf("parsing the content template: %w", err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&limitedWriter{w: &buf, remaining: maxRenderedTemplateBytes}, templateData(controlPlaneVersion)); err != nil {
		if errors.Is(err, errTemplateTooLarge) {
			return nil, errTemplateTooLarge
		}
		return nil, fmt.Errorf("executing the content template: %w", err)
	}
	return buf.Bytes(), nil
}

// limitedWriter fails a write that would take it past remaining bytes.
type limitedWriter struct {
	w         *bytes.Buffer
	remaining int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.remaining {
		return 0, errTemplateTooLarge
	}
	l.remaining -= len(p)
	return l.w.Write(p)
}

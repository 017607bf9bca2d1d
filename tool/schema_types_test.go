package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompileSchemaTypeNames(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"OBJECT","properties":{"n":{"type":["Integer","NULL"]},"type":{"type":"String"}},"default":{"type":"kept"}}`))
	if err != nil {
		t.Fatalf("upper-case type names: %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"n":3,"type":"x"}`)); err != nil {
		t.Errorf("valid arguments refused after normalisation: %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"n":"three"}`)); err == nil {
		t.Errorf("a string accepted for an Integer property")
	}
	if !strings.Contains(string(s.JSON()), `"object"`) || strings.Contains(string(s.JSON()), `"OBJECT"`) {
		t.Errorf("schema not normalised: %s", s.JSON())
	}
	if !strings.Contains(string(s.JSON()), `"kept"`) {
		t.Errorf("a default value was rewritten: %s", s.JSON())
	}
	_, err = CompileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"objekt"}}}`))
	if err == nil || !strings.Contains(err.Error(), `/properties/a/type: unknown type "objekt"`) {
		t.Errorf("unknown type name: %v", err)
	}
}

func TestValidationOfNullNamesNull(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(json.RawMessage(`{"text":null}`))
	if err == nil || strings.Contains(err.Error(), "reflect") || !strings.Contains(err.Error(), "text: type: null") {
		t.Errorf("null argument: %v", err)
	}
}

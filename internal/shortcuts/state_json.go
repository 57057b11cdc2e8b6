package shortcuts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// stateFromJSON is the stored state data (a state file's attributes, as Terraform sends them to
// be upgraded) as a value of typ, decoded as tftypes decodes it with IgnoreUndefinedAttributes:
// attributes the type lacks are skipped, those the data lacks are null. tftypes starts a JSON
// decoder for every value inside the state, and a stored job's 60-odd attributes made that a
// quarter of what a plan of 1,000 jobs allocated; this decodes the data once. A type it does not
// decode (a dynamic one) is an error, and the caller decodes with tftypes.
func stateFromJSON(data []byte, typ tftypes.Type) (tftypes.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return tftypes.Value{}, err
	}
	return valueFromJSON(v, typ)
}

var errNotDecoded = errors.New("not decoded here")

func valueFromJSON(v any, typ tftypes.Type) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	switch typ := typ.(type) {
	case tftypes.List, tftypes.Set:
		elems, ok := v.([]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("a %T for a %s", v, typ)
		}
		var et tftypes.Type
		switch typ := typ.(type) {
		case tftypes.List:
			et = typ.ElementType
		case tftypes.Set:
			et = typ.ElementType
		}
		if et.Is(tftypes.DynamicPseudoType) {
			return tftypes.Value{}, errNotDecoded
		}
		vals := make([]tftypes.Value, len(elems))
		for i, e := range elems {
			ev, err := valueFromJSON(e, et)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals[i] = ev
		}
		return tftypes.NewValue(typ, vals), nil
	case tftypes.Map:
		elems, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("a %T for a %s", v, typ)
		}
		if typ.ElementType.Is(tftypes.DynamicPseudoType) {
			return tftypes.Value{}, errNotDecoded
		}
		vals := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			ev, err := valueFromJSON(e, typ.ElementType)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals[k] = ev
		}
		return tftypes.NewValue(typ, vals), nil
	case tftypes.Object:
		attrs, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("a %T for a %s", v, typ)
		}
		vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
		for name, at := range typ.AttributeTypes {
			av, err := valueFromJSON(attrs[name], at)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals[name] = av
		}
		return tftypes.NewValue(typ, vals), nil
	}
	switch {
	case typ.Is(tftypes.String):
		switch v := v.(type) {
		case string:
			return tftypes.NewValue(typ, v), nil
		case json.Number:
			return tftypes.NewValue(typ, string(v)), nil
		case bool:
			return tftypes.NewValue(typ, fmt.Sprint(v)), nil
		}
	case typ.Is(tftypes.Number):
		var s string
		switch v := v.(type) {
		case json.Number:
			s = string(v)
		case string:
			s = v
		default:
			return tftypes.Value{}, fmt.Errorf("a %T for a number", v)
		}
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(typ, f), nil
	case typ.Is(tftypes.Bool):
		switch v {
		case true, "true", "1", json.Number("1"):
			return tftypes.NewValue(typ, true), nil
		case false, "false", "0", json.Number("0"):
			return tftypes.NewValue(typ, false), nil
		}
	default:
		return tftypes.Value{}, errNotDecoded
	}
	return tftypes.Value{}, fmt.Errorf("a %T for a %s", v, typ)
}

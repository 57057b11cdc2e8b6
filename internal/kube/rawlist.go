package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// A refresh's shared list of a kind is read as it streams in, one object at a time, each kept
// as JSON without its managedFields. Decoding the whole list into maps first (the dynamic
// client's List) held every object of the kind decoded at once: at 1,000 jobs that was most of
// a plan's live heap.

// rawClient is a REST client for any API path, whose responses are read as they are.
func rawClient(cfg *rest.Config) (rest.Interface, error) {
	raw := rest.CopyConfig(cfg)
	raw.GroupVersion = &schema.GroupVersion{}
	raw.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	return rest.UnversionedRESTClientFor(raw)
}

// ListJSON lists the objects of gvr in namespace that labelSelector selects ("" all) and
// returns each as JSON without its managedFields, by name, for a caller that decodes one at a
// time (a query's list of 1,000 jobs decoded whole held 20 MB of maps).
func (c *Client) ListJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string) (map[string][]byte, error) {
	tflog.Debug(ctx, "LIST "+gvr.Resource, map[string]any{"namespace": namespace, "selector": labelSelector})
	return c.listJSON(ctx, gvr, namespace, labelSelector)
}

// listJSON lists the objects of gvr in namespace that labelSelector selects and returns each as
// JSON without its managedFields, by name.
func (c *Client) listJSON(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string) (map[string][]byte, error) {
	return c.listJSONBy(ctx, gvr, namespace, labelSelector, byName)
}

// byName keys the objects of one namespace's list by name; byNamespacedName those of a list of
// every namespace by "namespace/name".
func byName(_, name string) string { return name }

func byNamespacedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// listJSONBy is listJSON with each object keyed by key of its namespace and name.
func (c *Client) listJSONBy(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string, key func(namespace, name string) string) (map[string][]byte, error) {
	if _, err := c.dynamic(); err != nil {
		return nil, err
	}
	segments := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		segments = []string{"/api", gvr.Version}
	}
	if namespace != "" {
		segments = append(segments, "namespaces", namespace)
	}
	objects := map[string][]byte{}
	for next := ""; ; {
		var page map[string][]byte
		err := retry(ctx, "LIST "+gvr.Resource, func() error {
			req := c.raw.Get().AbsPath(append(segments, gvr.Resource)...).Param("limit", strconv.Itoa(listPage))
			if labelSelector != "" {
				req = req.Param("labelSelector", labelSelector)
			}
			if next != "" {
				req = req.Param("continue", next)
			}
			body, err := req.Stream(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = body.Close() }()
			page, next, err = readList(body, key)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", gvr.Resource, namespace, err)
		}
		maps.Copy(objects, page)
		if next == "" {
			return objects, nil
		}
	}
}

// listPage is how many objects a LIST asks for at once: a cluster of thousands of Workloads is
// read in pages, as kubectl does, not in one answer the API server builds whole in memory.
const listPage = 500

// readList reads a list's items from r one at a time, each without its managedFields, by key of
// its namespace and name, and the token of its next page ("" for the last). Items of built-in kinds come without apiVersion and kind: they are
// given the list's, which comes after them.
func readList(r io.Reader, key func(namespace, name string) string) (objects map[string][]byte, next string, err error) {
	dec := json.NewDecoder(r)
	if err := expect(dec, json.Delim('{')); err != nil {
		return nil, "", err
	}
	objects = map[string][]byte{}
	var apiVersion, kind string
	var kindless []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		switch tok {
		case "items":
			if err := expect(dec, json.Delim('[')); err != nil {
				return nil, "", err
			}
			for dec.More() {
				var item map[string]json.RawMessage
				if err := dec.Decode(&item); err != nil {
					return nil, "", err
				}
				namespace, name, data, err := withoutManagedFields(item)
				if err != nil {
					return nil, "", err
				}
				name = key(namespace, name)
				objects[name] = data
				if _, ok := item["kind"]; !ok {
					kindless = append(kindless, name)
				}
			}
			if err := expect(dec, json.Delim(']')); err != nil {
				return nil, "", err
			}
		case "apiVersion":
			err = dec.Decode(&apiVersion)
		case "kind":
			err = dec.Decode(&kind)
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			err = dec.Decode(&meta)
			next = meta.Continue
		default:
			err = dec.Decode(&json.RawMessage{})
		}
		if err != nil {
			return nil, "", err
		}
	}
	for _, name := range kindless {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(objects[name], &item); err != nil {
			return nil, "", err
		}
		item["apiVersion"], _ = json.Marshal(apiVersion)
		item["kind"], _ = json.Marshal(strings.TrimSuffix(kind, "List"))
		data, err := json.Marshal(item)
		if err != nil {
			return nil, "", err
		}
		objects[name] = data
	}
	return objects, next, expect(dec, json.Delim('}'))
}

// withoutManagedFields is item's namespace, name and item as JSON without
// metadata.managedFields (no read looks at them, and they are often half of a job object).
func withoutManagedFields(item map[string]json.RawMessage) (namespace, name string, data []byte, err error) {
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(item["metadata"], &meta); err != nil {
		return "", "", nil, fmt.Errorf("an item's metadata: %w", err)
	}
	if err := json.Unmarshal(meta["name"], &name); err != nil {
		return "", "", nil, fmt.Errorf("an item's name: %w", err)
	}
	if ns, ok := meta["namespace"]; ok {
		if err := json.Unmarshal(ns, &namespace); err != nil {
			return "", "", nil, fmt.Errorf("an item's namespace: %w", err)
		}
	}
	if _, ok := meta["managedFields"]; ok {
		delete(meta, "managedFields")
		m, err := json.Marshal(meta)
		if err != nil {
			return "", "", nil, err
		}
		item["metadata"] = m
	}
	data, err = json.Marshal(item)
	return namespace, name, data, err
}

func expect(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("a list: %v where %v was expected", tok, want)
	}
	return nil
}

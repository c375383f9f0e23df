package main

import (
	"archive/zip"
	"bytes"
	"debug/macho"
	"encoding/binary"
	"io"
	"io/fs"
	"testing"
)

// thinMachO returns a minimal 64-bit Mach-O executable header for cpu and
// sub, with no load commands, followed by body: enough for debug/macho.
func thinMachO(cpu macho.Cpu, sub uint32, body string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, macho.FileHeader{Magic: macho.Magic64, Cpu: cpu, SubCpu: sub, Type: macho.TypeExec})
	binary.Write(&b, binary.LittleEndian, uint32(0)) // reserved (64-bit header)
	b.WriteString(body)
	return b.Bytes()
}

// TestWriteFat checks the universal binary against debug/macho.OpenFat:
// both slices present with their CPU types and subtypes, page-aligned
// (2^14) offsets, alignment field 14, and each slice's bytes unchanged
// (issue 15: a universal macOS binary written without Apple tools).
func TestWriteFat(t *testing.T) {
	amd := thinMachO(macho.CpuAmd64, 3, "amd64 body")
	arm := thinMachO(macho.CpuArm64, 0, "arm64 body, a little longer")
	var out bytes.Buffer
	if err := writeFat(&out, [][]byte{amd, arm}); err != nil {
		t.Fatal(err)
	}
	ff, err := macho.NewFatFile(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("macho.NewFatFile: %v", err)
	}
	if ff.Magic != macho.MagicFat || len(ff.Arches) != 2 {
		t.Fatalf("fat file: magic %#x, %d arches, want %#x and 2", ff.Magic, len(ff.Arches), macho.MagicFat)
	}
	for i, want := range []struct {
		cpu  macho.Cpu
		sub  uint32
		data []byte
	}{{macho.CpuAmd64, 3, amd}, {macho.CpuArm64, 0, arm}} {
		a := ff.Arches[i]
		if a.Cpu != want.cpu || a.SubCpu != want.sub || a.Align != fatAlignLog2 || a.Offset%(1<<fatAlignLog2) != 0 {
			t.Errorf("arch %d = cpu %v sub %d align %d offset %d, want cpu %v sub %d align %d and a 16 KiB-aligned offset",
				i, a.Cpu, a.SubCpu, a.Align, a.Offset, want.cpu, want.sub, fatAlignLog2)
		}
		got := out.Bytes()[a.Offset : a.Offset+a.Size]
		if !bytes.Equal(got, want.data) {
			t.Errorf("arch %d: slice bytes differ from the thin input", i)
		}
	}
}

// TestWriteFatRefuses checks that a slice that is not Mach-O, and two
// slices of one CPU, are refused.
func TestWriteFatRefuses(t *testing.T) {
	amd := thinMachO(macho.CpuAmd64, 3, "")
	for name, slices := range map[string][][]byte{
		"not Mach-O": {amd, []byte("\x7fELF not a Mach-O file at all")},
		"same CPU":   {amd, amd},
		"none":       nil,
	} {
		if err := writeFat(io.Discard, slices); err == nil {
			t.Errorf("%s: writeFat succeeded, want an error", name)
		}
	}
}

// TestWriteZip checks the bundle archive is reproducible: the same files
// in any order give the same bytes, entries are sorted, every time is the
// fixed one, and the permission bits are kept (binaries 0755).
func TestWriteZip(t *testing.T) {
	files := []bundleFile{
		{"server/linux/skilljack-mcp", []byte("ELF"), 0o755},
		{"manifest.json", []byte("{}"), 0o644},
		{"LICENSE", []byte("MIT"), 0o644},
	}
	var a, b bytes.Buffer
	if err := writeZip(&a, files); err != nil {
		t.Fatal(err)
	}
	if err := writeZip(&b, []bundleFile{files[2], files[0], files[1]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("writeZip: the same files in another order give other bytes")
	}
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"LICENSE", "manifest.json", "server/linux/skilljack-mcp"}
	wantModes := []fs.FileMode{0o644, 0o644, 0o755}
	if len(zr.File) != len(wantNames) {
		t.Fatalf("%d entries, want %d", len(zr.File), len(wantNames))
	}
	for i, f := range zr.File {
		if f.Name != wantNames[i] || f.Mode() != wantModes[i] || !f.Modified.Equal(zipTime) {
			t.Errorf("entry %d = %s %v %v, want %s %v %v", i, f.Name, f.Mode(), f.Modified, wantNames[i], wantModes[i], zipTime)
		}
	}
}

// TestDeclaredRefusesUnlisted checks that the manifest never declares a
// tool or prompt the server does not list.
func TestDeclaredRefusesUnlisted(t *testing.T) {
	l := listed{Tools: []tool{{Name: "load-skill", Description: "d"}}}
	if _, _, err := declared(l, []string{"load-skill", "skill-resource"}, nil); err == nil {
		t.Error("declared: a tool the server does not list was accepted")
	}
	if ts, _, err := declared(l, []string{"load-skill"}, nil); err != nil || len(ts) != 1 || ts[0].Description != "d" {
		t.Errorf("declared(load-skill) = %v, %v; want the listed tool", ts, err)
	}
}

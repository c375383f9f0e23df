package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
)

// fatAlignLog2 is the alignment of every slice of a universal binary, as a
// power of two: 2^14 = 16 KiB, the arm64 page size (amd64 pages are 4 KiB,
// so 16 KiB suits both). The kernel maps each slice from its offset, which
// must be page-aligned.
const fatAlignLog2 = 14

// writeFat writes a universal ("fat") Mach-O file holding thin, the thin
// Mach-O executables, in that order: the big-endian fat header (magic
// 0xcafebabe, the number of slices), one fat_arch entry per slice (CPU type
// and subtype read from the slice's own header, offset, size, alignment),
// then each slice at an offset that is a multiple of 2^[fatAlignLog2],
// zero-padded between. The layout is what lipo writes, without Apple tools.
// It fails when a slice is not a Mach-O file, two slices share a CPU type,
// or the file would pass 4 GiB (fat_arch offsets are 32-bit).
func writeFat(w io.Writer, thin [][]byte) error {
	if len(thin) == 0 {
		return fmt.Errorf("writing universal binary: no slices")
	}
	archs := make([]macho.FatArchHeader, len(thin))
	seen := map[macho.Cpu]bool{}
	const align = 1 << fatAlignLog2
	off := int64(8 + 20*len(thin)) // fat_header + fat_arch entries
	for i, b := range thin {
		f, err := macho.NewFile(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("writing universal binary: slice %d: %w", i, err)
		}
		if seen[f.Cpu] {
			return fmt.Errorf("writing universal binary: two slices for CPU %v", f.Cpu)
		}
		seen[f.Cpu] = true
		off = (off + align - 1) &^ (align - 1)
		if off+int64(len(b)) > 1<<32-1 {
			return fmt.Errorf("writing universal binary: larger than 4 GiB")
		}
		archs[i] = macho.FatArchHeader{Cpu: f.Cpu, SubCpu: f.SubCpu, Offset: uint32(off), Size: uint32(len(b)), Align: fatAlignLog2}
		off += int64(len(b))
	}
	var hdr bytes.Buffer
	binary.Write(&hdr, binary.BigEndian, [2]uint32{macho.MagicFat, uint32(len(thin))})
	for _, a := range archs {
		binary.Write(&hdr, binary.BigEndian, a)
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	pos := int64(hdr.Len())
	for i, b := range thin {
		pad := int64(archs[i].Offset) - pos
		if _, err := w.Write(make([]byte, pad)); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		pos += pad + int64(len(b))
	}
	return nil
}

package conformance

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// PNG returns a 1x1 red PNG image, encoded on each call.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("conformance: encoding a 1x1 PNG: " + err.Error())
	}
	return b.Bytes()
}

// WAV returns a WAV file holding one silent 16-bit mono sample at 8 kHz.
func WAV() []byte {
	const rate, channels, bits = 8000, 1, 16
	data := []byte{0, 0}
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))                         // fmt chunk size
	le(uint16(1))                          // PCM
	le(uint16(channels))                   //
	le(uint32(rate))                       //
	le(uint32(rate * channels * bits / 8)) // byte rate
	le(uint16(channels * bits / 8))        // block align
	le(uint16(bits))
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

#include "elf_symbols.h"

#include <elf.h>

#include <cstring>

#include "file_util.h"

namespace skilldb::verify::internal {
namespace {

template <typename T>
bool ReadAt(const std::string& file, uint64_t offset, T* out) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) return false;
  std::memcpy(out, file.data() + offset, sizeof(T));
  return true;
}

std::string StringAt(const std::string& file, const Elf64_Shdr& strtab,
                     uint32_t index) {
  if (index >= strtab.sh_size) return "";
  const uint64_t start = strtab.sh_offset + index;
  if (start >= file.size()) return "";
  const uint64_t end = std::min<uint64_t>(strtab.sh_offset + strtab.sh_size,
                                          file.size());
  const char* p = file.data() + start;
  return std::string(p, strnlen(p, end - start));
}

}  // namespace

Result<ElfDynamicInfo> ReadElfDynamicInfo(const std::string& path) {
  SKILLDB_ASSIGN_OR_RETURN(std::string file, ReadFile(path, int64_t{1} << 30));
  const Status bad = Status::Corruption("'" + path +
                                        "' is not a readable ELF64 object");
  Elf64_Ehdr eh;
  if (!ReadAt(file, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_shentsize != sizeof(Elf64_Shdr)) {
    return bad;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!ReadAt(file, eh.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) {
      return bad;
    }
  }
  ElfDynamicInfo info;
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_DYNAMIC) continue;
    if (sh.sh_link >= sections.size()) return bad;
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    if (sh.sh_type == SHT_DYNSYM) {
      const uint64_t count = sh.sh_size / sizeof(Elf64_Sym);
      for (uint64_t i = 1; i < count; ++i) {
        Elf64_Sym sym;
        if (!ReadAt(file, sh.sh_offset + i * sizeof(Elf64_Sym), &sym)) {
          return bad;
        }
        const int bind = ELF64_ST_BIND(sym.st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK &&
            bind != STB_GNU_UNIQUE) {
          continue;
        }
        const int type = ELF64_ST_TYPE(sym.st_info);
        info.symbols.push_back({StringAt(file, strtab, sym.st_name),
                                sym.st_shndx != SHN_UNDEF, bind == STB_WEAK,
                                type == STT_FUNC || type == STT_GNU_IFUNC});
      }
    } else {
      const uint64_t count = sh.sh_size / sizeof(Elf64_Dyn);
      for (uint64_t i = 0; i < count; ++i) {
        Elf64_Dyn dyn;
        if (!ReadAt(file, sh.sh_offset + i * sizeof(Elf64_Dyn), &dyn)) {
          return bad;
        }
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED) {
          info.needed.push_back(
              StringAt(file, strtab, static_cast<uint32_t>(dyn.d_un.d_val)));
        }
      }
    }
  }
  return info;
}

}  // namespace skilldb::verify::internal
